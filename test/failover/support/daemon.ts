/**
 * A server process of the failover deployment (etcd, Patroni, HAProxy): its output in a log file,
 * its pid in a pid file in the run's directory, from which scripts/test-failover.mjs ends it if
 * the test could not (its command line names the run's directory, which is how the script knows
 * the pid is still this run's process).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLUSTER_DIR } from '../../cluster/support/settings.js';

export class Daemon {
  private child?: ChildProcess;
  private exited?: Promise<void>;
  readonly logFile: string;
  private readonly pidFile: string;

  constructor(
    readonly name: string,
    private readonly command: string,
    private readonly args: string[],
    private readonly env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin' },
  ) {
    this.logFile = join(CLUSTER_DIR, `${name}.log`);
    this.pidFile = join(CLUSTER_DIR, `${name}.pid`);
  }

  get pid(): number | undefined {
    return this.child?.pid;
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

  /** Sends `signal` and waits until the process is gone; SIGKILL after `graceMs`. */
  async stop(signal: NodeJS.Signals = 'SIGTERM', graceMs = 10_000): Promise<void> {
    if (this.running) {
      this.child!.kill(signal);
      const timer = new Promise<'late'>((resolve) => setTimeout(() => resolve('late'), graceMs).unref());
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
}

/** `pid` and every process below it (PostgreSQL's backends are children of the postmaster). */
export function processTree(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // ended meanwhile
    }
    // "pid (comm) state ppid …": comm may hold spaces and parentheses, so read after the last ')'.
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
  }
  const tree: number[] = [];
  const visit = (p: number) => {
    tree.push(p);
    for (const child of children.get(p) ?? []) visit(child);
  };
  visit(pid);
  return tree;
}

/** Whether `pid` runs (a zombie waiting for its parent to reap it does not). */
export function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/** SIGKILL to each pid (those already gone are skipped). */
export function killAll(pids: number[]): void {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

/** Polls `check` until it holds; `what` names it in the error (a function: read when it fails). */
export async function waitUntil(check: () => boolean | Promise<boolean>, timeoutMs: number, what: string | (() => string), intervalMs = 100): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${typeof what === 'function' ? what() : what}: not after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
