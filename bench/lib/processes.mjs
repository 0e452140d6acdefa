/**
 * Server processes for the benchmark: started pinned to one core (taskset), their output kept in a
 * log file, their resident memory read from /proc while the load runs.
 */
import { spawn } from 'node:child_process';
import { openSync, closeSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

/** `taskset -c <cpu> command …` when a core is given (Linux), the plain command otherwise. */
function pinned(cpu, command, args) {
  return cpu === null ? [command, args] : ['taskset', ['-c', String(cpu), command, ...args]];
}

/**
 * Starts `command args` with `env`, pinned to `cpu`, and waits until GET `readyUrl` answers 2xx.
 * Returns { pid, stop(), rssMb() }.
 */
export async function startServer({ name, command, args, env, cpu, readyUrl, logFile, timeoutMs = 60_000 }) {
  const log = openSync(logFile, 'a');
  const [file, argv] = pinned(cpu, command, args);
  const child = spawn(file, argv, { env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', log, log] });
  closeSync(log);
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${name} exited during start-up (${child.exitCode}); see ${logFile}:\n${tail(logFile)}`);
    try {
      const response = await fetch(readyUrl, { signal: AbortSignal.timeout(2000) });
      await response.arrayBuffer();
      if (response.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${name} did not answer ${readyUrl} within ${timeoutMs / 1000} s; see ${logFile}:\n${tail(logFile)}`);
    }
    await sleep(100);
  }
  return {
    pid: child.pid,
    rssMb: () => rssMb(child.pid),
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(killer);
    },
  };
}

/**
 * Resident set size in MB of `pid` and its descendants. taskset execs the server (same pid), but
 * a wrapper could fork, so children are counted too.
 */
export function rssMb(pid) {
  let kb = 0;
  for (const p of [pid, ...descendants(pid)]) {
    try {
      const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${p}/status`, 'utf8'));
      if (match) kb += Number(match[1]);
    } catch {
      // gone
    }
  }
  return kb / 1024;
}

function descendants(pid) {
  try {
    const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
    return children.flatMap((child) => [child, ...descendants(child)]);
  } catch {
    return [];
  }
}

function tail(file, lines = 20) {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}
