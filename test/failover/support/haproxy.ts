/**
 * HAProxy in front of the Patroni nodes with deploy/haproxy-postgres.cfg: the sample's every line,
 * its `bind` address and each `server`'s address and check port replaced by the run's loopback
 * ports. So the test exercises the configuration docs/operations/failover.md recommends, not a copy of it.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { CLUSTER_DIR } from '../../cluster/support/settings.js';
import { Daemon } from '../../cluster/support/daemon.js';
import { waitUntil } from './daemon.js';
import type { PatroniNode } from './patroni.js';

export const SAMPLE = 'deploy/haproxy-postgres.cfg';

/** The sample with this run's addresses; fails if the sample no longer has one bind and a server per node. */
export function haproxyConfig(port: number, nodes: PatroniNode[]): string {
  let binds = 0;
  let servers = 0;
  const lines = readFileSync(resolve(SAMPLE), 'utf8').split('\n').map((line) => {
    if (/^\s*bind\s/.test(line)) {
      binds++;
      return line.replace(/bind\s+\S+/, `bind 127.0.0.1:${port}`);
    }
    const server = /^(\s*server\s+)\S+\s+\S+(.*\bcheck port\s+)\d+(.*)$/.exec(line);
    if (!server) return line;
    const node = nodes[servers++];
    return node ? `${server[1]}${node.name} ${node.pgAddress}${server[2]}${node.apiPort}${server[3]}` : `# (no node for) ${line}`;
  });
  if (binds !== 1 || servers !== nodes.length) throw new Error(`${SAMPLE}: expected 1 bind and ${nodes.length} server lines with "check port", found ${binds} and ${servers}`);
  return `# ${SAMPLE}, with the addresses of one failover test run.\n${lines.join('\n')}`;
}

export class HAProxy {
  private readonly daemon: Daemon;

  constructor(
    readonly port: number,
    nodes: PatroniNode[],
  ) {
    const configFile = join(CLUSTER_DIR, 'haproxy.cfg');
    writeFileSync(configFile, haproxyConfig(port, nodes));
    // The sample leaves the log target to the operator; a second global section (HAProxy merges
    // them) sends this run's to the log file: servers marked up and down.
    const logFile = join(CLUSTER_DIR, 'haproxy-log.cfg');
    writeFileSync(logFile, 'global\n    log stderr format raw local0 notice\n');
    // -db: in the foreground, one process; exits when its configuration is wrong.
    this.daemon = new Daemon('haproxy', 'haproxy', ['-db', '-f', configFile, '-f', logFile]);
  }

  /** postgres://… through HAProxy: the leader, whichever node it is. */
  url(database: string): string {
    return `postgres://postgres@127.0.0.1:${this.port}/${database}`;
  }

  /**
   * Starts HAProxy and waits until its checks have settled: every connection lands on the leader.
   * (At start it counts every server up, the replica too, until the replica fails its checks.)
   * Connections go round robin, so four in a row on a primary mean the replica is out.
   */
  async start(): Promise<void> {
    this.daemon.start();
    let inARow = 0;
    await waitUntil(async () => {
      if (!this.daemon.running) throw new Error(`haproxy exited:\n${this.daemon.logTail()}`);
      inARow = (await this.reachesLeader()) === true ? inARow + 1 : 0;
      return inARow >= 4;
    }, 30_000, 'HAProxy passing every connection to the leader', 250);
  }

  /** true: a connection through HAProxy lands on a primary; false: on a replica; undefined: none. */
  async reachesLeader(): Promise<boolean | undefined> {
    const client = new pg.Client({ connectionString: this.url('postgres'), connectionTimeoutMillis: 1000 });
    client.on('error', () => undefined);
    try {
      await client.connect();
      const { rows } = await client.query<{ recovery: boolean }>('SELECT pg_is_in_recovery() AS recovery');
      return !rows[0].recovery;
    } catch {
      return undefined;
    } finally {
      await client.end().catch(() => undefined);
    }
  }

  stop(): Promise<void> {
    return this.daemon.stop('SIGTERM', 10_000);
  }

  logTail(): string {
    return this.daemon.logTail(15);
  }
}
