import { spawn } from 'node:child_process';

export interface CliResult {
  code: number | null;
  stdout: string;
  /** stderr without the build notice (see `built`). */
  stderr: string;
  /** Whether scripts/latchkey.mjs ran tsc before the command (dist/ missing or older than src/). */
  built: boolean;
}

export const PROJECT = new URL('../../', import.meta.url).pathname;
/** The entry users run (`npx latchkey`, `npm run -s cli --`): builds dist/ when stale, then runs the CLI in-process. */
export const CLI = 'scripts/latchkey.mjs';
/** The one line scripts/latchkey.mjs prints on stderr when it builds. */
const BUILD_NOTICE = /^latchkey: building dist\/ \([^)\n]*\)…\n/;

/**
 * Runs the admin CLI with this test file's database configuration; `input` goes to its stdin.
 * A rebuild (someone edited src/ since the suite built) is reported in `built`, not in `stderr`,
 * so that tests about a command's output do not depend on the state of dist/.
 */
export function runCli(args: string[], options: { input?: string; env?: Record<string, string> } = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd: PROJECT, env: { ...process.env, ...options.env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr: stderr.replace(BUILD_NOTICE, ''), built: BUILD_NOTICE.test(stderr) }));
    child.stdin.end(options.input ?? '');
  });
}
