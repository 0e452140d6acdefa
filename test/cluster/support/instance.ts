/**
 * One Latchkey instance as production runs it: `node dist/src/main.js` in its own process, its
 * output in a log file. Its readiness is read straight from its port over plain http (the only
 * requests a production instance answers without a trusted proxy in front).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLUSTER_DIR } from './settings.js';

export class Instance {
  private child?: ChildProcess;
  private exited?: Promise<void>;
  readonly logFile: string;
  private readonly pidFile: string;

  constructor(
    readonly name: string,
    readonly port: number,
    private readonly env: Record<string, string>,
  ) {
    this.logFile = join(CLUSTER_DIR, `${name}.log`);
    this.pidFile = join(CLUSTER_DIR, `${name}.pid`);
  }

  /** host:port, as the balancer's X-Upstream names it (nginx's $upstream_addr, HAProxy's bc_dst). */
  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  /** The process id of the current run of the instance (it changes only when the test restarts it). */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  async start(): Promise<void> {
    const log = openSync(this.logFile, 'a');
    const child = spawn(process.execPath, ['dist/src/main.js'], { env: this.env, stdio: ['ignore', log, log] });
    closeSync(log);
    this.child = child;
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
    writeFileSync(this.pidFile, String(child.pid));
    await this.waitForReadiness(200, 30_000);
  }

  /** Ends the process with `signal` and waits until it is gone. */
  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    if (!this.running) return;
    this.child!.kill(signal);
    await this.exited;
    rmSync(this.pidFile, { force: true });
  }

  /** GET /health/ready on the instance's own port: its status, or 0 when nothing answers. */
  async readiness(): Promise<number> {
    try {
      const response = await fetch(`http://${this.address}/health/ready`, { signal: AbortSignal.timeout(5000) });
      await response.arrayBuffer();
      return response.status;
    } catch {
      return 0;
    }
  }

  /** Polls readiness until it reports `status`; fails early if the process exits. */
  async waitForReadiness(status: number, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let last = -1;
    while (Date.now() < deadline) {
      if (!this.running) throw new Error(`${this.name} exited (${this.child?.exitCode ?? this.child?.signalCode}):\n${this.logTail()}`);
      last = await this.readiness();
      if (last === status) return;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    throw new Error(`${this.name}: /health/ready still ${last} after ${timeoutMs} ms, expected ${status}:\n${this.logTail()}`);
  }

  logTail(lines = 30): string {
    if (!existsSync(this.logFile)) return '(no log)';
    return readFileSync(this.logFile, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  }
}
