import type { CheckResult } from '../doctor/check.js';
import type { DoctorReport } from '../doctor/doctor.js';
import { CommandOutput, UsageError, type StandaloneCommand } from './command.js';

const MARKS: Record<CheckResult['status'], string> = { ok: 'ok  ', warn: 'WARN', fail: 'FAIL', skip: '--  ' };

/** The report for people: one line per check, the fix under each problem, a count at the end. */
function text(report: DoctorReport): string {
  // The id column is as wide as the longest id (idp:<id> entries can be long), at least 14.
  const width = Math.max(14, ...report.checks.map((check) => check.id.length));
  const lines = report.checks.flatMap((check) => [`${MARKS[check.status]}  ${check.id.padEnd(width)} ${check.detail}`, ...(check.fix ? [`${' '.repeat(width + 7)}fix: ${check.fix}`] : [])]);
  const verdict = report.ok ? `No failures${report.warnings > 0 ? `, ${report.warnings} warning(s) to review` : ''}.` : `${report.failures} failure(s), ${report.warnings} warning(s).`;
  return `${lines.join('\n')}\n\n${verdict}\n`;
}

/**
 * `doctor [--url https://public-url] [--json]`: checks a deployment from its environment (run it
 * where an instance runs, with the instance's environment) and, with --url, from outside
 * (src/doctor/). Exits 1 when a check fails; warnings alone exit 0.
 */
export const doctorCommand: StandaloneCommand = {
  standalone: true,
  usage: 'doctor [--url https://PUBLIC-URL] [--json]',
  options: { url: { type: 'string' }, json: { type: 'boolean' } },
  async run(flags) {
    const url = flags.url as string | undefined;
    if (url !== undefined && !/^https?:\/\/[^\s]+$/.test(url)) throw new UsageError('--url must be an http:// or https:// URL');
    const { runDoctor } = await import('../doctor/doctor.js');
    const report = await runDoctor({ url });
    return new CommandOutput(report, { text: flags.json === true ? undefined : text(report), exitCode: report.ok ? 0 : 1 });
  },
};
