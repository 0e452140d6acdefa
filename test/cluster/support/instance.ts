/**
 * One Latchkey instance as production runs it: `node dist/src/main.js` in its own process, its
 * output in a log file. Its readiness is read straight from its port over plain http (the only
 * requests a production instance answers without a trusted proxy in front).
 */
import { Daemon } from './daemon.js';

export class Instance {
  private readonly daemon: Daemon;

  constructor(
    readonly name: string,
    readonly port: number,
    env: Record<string, string>,
  ) {
    this.daemon = new Daemon(name, process.execPath, ['dist/src/main.js'], env);
  }

  get logFile(): string {
    return this.daemon.logFile;
  }

  /** host:port, as nginx's $upstream_addr names it. */
  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  /** The process id of the current run of the instance (it changes only when the test restarts it). */
  get pid(): number | undefined {
    return this.daemon.pid;
  }

  get running(): boolean {
    return this.daemon.running;
  }

  async start(): Promise<void> {
    this.daemon.start();
    await this.waitForReadiness(200, 30_000);
  }

  /** Ends the process with `signal` and waits until it is gone. */
  stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    return this.daemon.stop(signal);
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
      if (!this.running) throw new Error(`${this.name} exited (${this.daemon.exit}):\n${this.logTail()}`);
      last = await this.readiness();
      if (last === status) return;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    throw new Error(`${this.name}: /health/ready still ${last} after ${timeoutMs} ms, expected ${status}:\n${this.logTail()}`);
  }

  logTail(lines = 30): string {
    return this.daemon.logTail(lines);
  }

  /** The 500s this instance logged, with their stack traces (JsonErrors' serverError: "Unexpected error on …"). */
  unexpectedErrors(): string[] {
    return this.daemon.logExcerpts(/Unexpected error/);
  }
}
