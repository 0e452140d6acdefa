/**
 * What clients saw in each phase of the run: requests, failures by status, and how long the
 * service was unavailable (from the first to the last failed answer), from the load's records.
 */
import type { Answer, Probe } from './load.js';

export interface Phase {
  name: string;
  /** The phase's window (ms since the epoch): answers that came in it belong to it. */
  start: number;
  end: number;
  /** When the fault was caused, if the phase has one. */
  faultAt?: number;
}

export interface PhaseFigures {
  phase: string;
  requests: number;
  succeeded: number;
  /** Failed answers by status ('503', '0' for no answer). */
  failures: Record<string, number>;
  /** Seconds from the first failed answer to the last one (0 when none failed). */
  unavailableSeconds: number;
  /** The longest a request waited for its answer, in seconds. */
  slowestSeconds: number;
  /** Seconds from the fault to the last failed answer. */
  faultToRecoverySeconds?: number;
  /** /health/ready answers of 503 by instance: how many, and seconds from the first to the last. */
  unready: Record<string, { count: number; seconds: number }>;
}

const ok = (status: number) => status >= 200 && status < 300;
const seconds = (ms: number) => Math.round(ms / 100) / 10;

export function phaseFigures(phase: Phase, answers: Answer[], probes: Probe[]): PhaseFigures {
  const inPhase = answers.filter((a) => a.at >= phase.start && a.at < phase.end);
  const failed = inPhase.filter((a) => !ok(a.status));
  const failures: Record<string, number> = {};
  for (const a of failed) failures[a.status] = (failures[a.status] ?? 0) + 1;
  const unready: PhaseFigures['unready'] = {};
  for (const instance of new Set(probes.map((p) => p.instance))) {
    const times = probes.filter((p) => p.instance === instance && p.at >= phase.start && p.at < phase.end && p.status === 503).map((p) => p.at);
    if (times.length > 0) unready[instance] = { count: times.length, seconds: seconds(Math.max(...times) - Math.min(...times)) };
  }
  const first = Math.min(...failed.map((a) => a.sentAt));
  const last = Math.max(...failed.map((a) => a.at));
  return {
    phase: phase.name,
    requests: inPhase.length,
    succeeded: inPhase.length - failed.length,
    failures,
    unavailableSeconds: failed.length > 0 ? seconds(last - first) : 0,
    slowestSeconds: seconds(Math.max(0, ...inPhase.map((a) => a.at - a.sentAt))),
    ...(phase.faultAt !== undefined ? { faultToRecoverySeconds: failed.length > 0 ? seconds(last - phase.faultAt) : 0 } : {}),
    unready,
  };
}

/** One table for the run's output. */
export function summaryTable(figures: PhaseFigures[]): string {
  const header = ['phase', 'requests', '2xx', 'failures by status', 'unavailable (first→last failure)', 'fault→last failure', 'slowest answer', '/health/ready 503s'];
  const rows = figures.map((f) => [
    f.phase,
    String(f.requests),
    String(f.succeeded),
    Object.entries(f.failures).map(([status, n]) => `${n} × ${status === '0' ? 'no answer' : status}`).join(', ') || '-',
    `${f.unavailableSeconds.toFixed(1)} s`,
    f.faultToRecoverySeconds === undefined ? '-' : `${f.faultToRecoverySeconds.toFixed(1)} s`,
    `${f.slowestSeconds.toFixed(1)} s`,
    Object.entries(f.unready).map(([instance, u]) => `${instance}: ${u.count} over ${u.seconds.toFixed(1)} s`).join(', ') || '-',
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
  return [line(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}
