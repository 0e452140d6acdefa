/**
 * Stops and starts the machine's PostgreSQL (Debian's pg_ctlcluster, as root or the cluster's
 * owner). Only the cluster test does this, after the main suite, with nothing else using it.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';

const CLUSTER_NAME = 'main';

function pgCtlCluster(action: 'start' | 'stop'): void {
  const version = readdirSync('/etc/postgresql').sort().pop();
  if (!version) throw new Error('No PostgreSQL cluster in /etc/postgresql');
  // Exit 2: already in that state, which is what we want.
  const result = spawnSync('pg_ctlcluster', ['--skip-systemctl-redirect', version, CLUSTER_NAME, action], { encoding: 'utf8' });
  if (result.status !== 0 && result.status !== 2) throw new Error(`pg_ctlcluster ${action} failed (${result.status}): ${result.stderr}${result.error?.message ?? ''}`);
}

export function isPostgresUp(): boolean {
  return spawnSync('pg_isready', ['-h', '127.0.0.1', '-p', '5432', '-q']).status === 0;
}

/** Stops PostgreSQL ("fast" mode: open sessions are ended, as when a server goes away). */
export function stopPostgres(): void {
  pgCtlCluster('stop');
}

/** Starts PostgreSQL (if it is not running) and waits until it accepts connections. */
export async function startPostgres(timeoutMs = 30_000): Promise<void> {
  if (isPostgresUp()) return;
  pgCtlCluster('start');
  const deadline = Date.now() + timeoutMs;
  while (!isPostgresUp()) {
    if (Date.now() > deadline) throw new Error('PostgreSQL did not come back');
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
