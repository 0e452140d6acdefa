/**
 * A one-member etcd (Debian's etcd-server 3.4) for Patroni's leader key. Patroni 3.0 speaks etcd's
 * v3 API through its JSON gateway (the `etcd3:` section of patroni.yml), so no v2 switch is needed.
 * Its data lives in the run's directory.
 */
import { join } from 'node:path';
import { CLUSTER_DIR } from '../../cluster/support/settings.js';
import { Daemon } from '../../cluster/support/daemon.js';
import { waitUntil } from './daemon.js';

export class Etcd {
  private readonly daemon: Daemon;

  constructor(
    readonly clientPort: number,
    peerPort: number,
  ) {
    const client = `http://127.0.0.1:${clientPort}`;
    const peer = `http://127.0.0.1:${peerPort}`;
    this.daemon = new Daemon('etcd', 'etcd', [
      '--name', 'etcd', '--data-dir', join(CLUSTER_DIR, 'etcd-data'),
      '--listen-client-urls', client, '--advertise-client-urls', client,
      '--listen-peer-urls', peer, '--initial-advertise-peer-urls', peer,
      '--initial-cluster', `etcd=${peer}`, '--initial-cluster-state', 'new',
    ]);
  }

  async start(): Promise<void> {
    this.daemon.start();
    await waitUntil(async () => {
      if (!this.daemon.running) throw new Error(`etcd exited:\n${this.daemon.logTail()}`);
      try {
        const response = await fetch(`http://127.0.0.1:${this.clientPort}/health`, { signal: AbortSignal.timeout(1000) });
        return ((await response.json()) as { health?: string }).health === 'true';
      } catch {
        return false;
      }
    }, 15_000, 'etcd healthy');
  }

  stop(): Promise<void> {
    return this.daemon.stop('SIGTERM', 10_000);
  }

  logTail(): string {
    return this.daemon.logTail(10);
  }
}
