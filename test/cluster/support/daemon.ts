/**
 * A server process a test starts (an instance, a proxy, a pooler, etcd, Patroni): its output in a
 * log file, its pid in a pid file in the run's directory (CLUSTER_DIR), from which
 * scripts/test-cluster.mjs and scripts/test-failover.mjs end it if the test could not (its command
 * line names the run's directory, or its environment carries CLUSTER_DIR, which is how the scripts
 * know the pid is still this run's process).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLUSTER_DIR } from './settings.js';

export class Daemon {
  private child?: ChildProcess;
  private exited?: Promise<void>;
  readonly logFile: string;
  private readonly pidFile: string;

  constructor(
    readonly name: string,
    private readonly command: string,
    private readonly args: string[],
    private readonly env: NodeJS.ProcessEnv = { PATH: process.env.PATH ?? '/usr/bin:/bin' },
  ) {
    this.logFile = join(CLUSTER_DIR, `${name}.log`);
    this.pidFile = join(CLUSTER_DIR, `${name}.pid`);
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** How the last run ended ('exit code 1', 'signal SIGKILL'), for messages; 'running' while it runs. */
  get exit(): string {
    if (!this.child || this.running) return 'running';
    return this.child.exitCode !== null ? `exit code ${this.child.exitCode}` : `signal ${this.child.signalCode}`;
  }

  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  start(): void {
    const log = openSync(this.logFile, 'a');
    const child = spawn(this.command, this.args, { env: this.env, stdio: ['ignore', log, log] });
    closeSync(log);
    this.child = child;
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
    writeFileSync(this.pidFile, String(child.pid));
  }

  /** Sends `signal` and waits until the process is gone; with `graceMs`, SIGKILL after that long. */
  async stop(signal: NodeJS.Signals = 'SIGTERM', graceMs?: number): Promise<void> {
    if (this.running) {
      this.child!.kill(signal);
      const timer = graceMs === undefined ? new Promise<never>(() => undefined) : new Promise<'late'>((resolve) => setTimeout(() => resolve('late'), graceMs).unref());
      if ((await Promise.race([this.exited, timer])) === 'late') {
        this.child!.kill('SIGKILL');
        await this.exited;
      }
    }
    rmSync(this.pidFile, { force: true });
  }

  logTail(lines = 30): string {
    if (!existsSync(this.logFile)) return '(no log)';
    return readFileSync(this.logFile, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  }

  /** Every line of the log matching `pattern`, each with the `after` lines that follow it (a stack trace), at most `limit` of them. */
  logExcerpts(pattern: RegExp, after = 12, limit = 5): string[] {
    if (!existsSync(this.logFile)) return [];
    const lines = readFileSync(this.logFile, 'utf8').split('\n');
    const excerpts: string[] = [];
    for (let i = 0; i < lines.length && excerpts.length < limit; i++) if (pattern.test(lines[i])) excerpts.push(lines.slice(i, i + 1 + after).join('\n'));
    return excerpts;
  }
}
