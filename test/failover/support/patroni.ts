/**
 * One node of a Patroni cluster: Patroni (Debian's 3.0) managing its own PostgreSQL 15 (data
 * directory, port and REST API port of its own), run as the `postgres` user because PostgreSQL
 * refuses to run as root. Two of them on one etcd make the highly available PostgreSQL the test
 * fails over.
 */
import { spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLUSTER_DIR } from '../../cluster/support/settings.js';
import { Daemon } from '../../cluster/support/daemon.js';
import { isAlive, killAll, processTree } from './daemon.js';

export const POSTGRES_BIN = '/usr/lib/postgresql/15/bin';
const OS_USER = 'postgres';

/**
 * The timing every node starts with (the cluster-wide part of the configuration, kept in etcd).
 * A leader that stops renewing its key loses it after `ttl` seconds; then a replica takes over.
 * Patroni needs loop_wait + 2 × retry_timeout ≤ ttl, so that a leader gives its key up (demotes
 * itself) before the key can expire under it when etcd stops answering.
 */
export const TIMING = { ttl: 8, loop_wait: 1, retry_timeout: 3 } as const;

export interface Member {
  name: string;
  /** leader, sync_standby or replica */
  role: string;
  /** running, starting, crashed, stopped, … */
  state: string;
}

/** GET /patroni: role (master or replica) and state from PostgreSQL itself, the leader's walsenders. */
export interface NodeStatus {
  state: string;
  role: string;
  /** A replica named in the synchronous state in etcd (the one Patroni may promote). */
  sync_standby?: boolean;
  replication?: { application_name: string; state: string; sync_state: string }[];
}

function osUser(): { uid: number; gid: number } {
  const id = (flag: string) => Number(spawnSync('id', [flag, OS_USER], { encoding: 'utf8' }).stdout.trim());
  return { uid: id('-u'), gid: id('-g') };
}

export class PatroniNode {
  readonly dataDir: string;
  private readonly daemon: Daemon;

  constructor(
    readonly name: string,
    readonly pgPort: number,
    readonly apiPort: number,
    etcdPort: number,
  ) {
    const dir = join(CLUSTER_DIR, name);
    this.dataDir = join(dir, 'data');
    const { uid, gid } = osUser();
    mkdirSync(dir, { mode: 0o700 });
    chownSync(dir, uid, gid);
    const configFile = join(CLUSTER_DIR, `${name}.yml`);
    // YAML is a superset of JSON.
    writeFileSync(configFile, JSON.stringify(nodeConfig(name, dir, pgPort, apiPort, etcdPort), null, 2));
    this.daemon = new Daemon(
      `${name}-patroni`,
      'setpriv',
      [`--reuid=${uid}`, `--regid=${gid}`, '--init-groups', '--', 'patroni', configFile],
      { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, LANG: 'C.UTF-8' },
    );
  }

  get pgAddress(): string {
    return `127.0.0.1:${this.pgPort}`;
  }

  start(): void {
    this.daemon.start();
  }

  /** The cluster as this node's REST API reports it, or undefined when it does not answer. */
  async members(): Promise<Member[] | undefined> {
    try {
      const response = await fetch(`http://127.0.0.1:${this.apiPort}/cluster`, { signal: AbortSignal.timeout(1000) });
      return ((await response.json()) as { members: Member[] }).members;
    } catch {
      return undefined;
    }
  }

  /** What this node's Patroni says of its PostgreSQL (GET /patroni, queried live), or undefined. */
  async status(): Promise<NodeStatus | undefined> {
    try {
      const response = await fetch(`http://127.0.0.1:${this.apiPort}/patroni`, { signal: AbortSignal.timeout(1000) });
      return (await response.json()) as NodeStatus;
    } catch {
      return undefined;
    }
  }

  /** The running postmaster's pid (PostgreSQL's own postmaster.pid), if any. */
  postmasterPid(): number | undefined {
    const file = join(this.dataDir, 'postmaster.pid');
    if (!existsSync(file)) return undefined;
    const pid = Number(readFileSync(file, 'utf8').split('\n')[0]);
    return pid > 0 && isAlive(pid) ? pid : undefined;
  }

  /** PostgreSQL crashes (SIGKILL to the postmaster); Patroni lives on and restarts or fails over. */
  killPostmaster(): number {
    const pid = this.postmasterPid();
    if (!pid) throw new Error(`${this.name}: no postmaster running`);
    process.kill(pid, 'SIGKILL');
    return pid;
  }

  /**
   * The node's host is lost: Patroni, the postmaster and every PostgreSQL process die at the same
   * instant, so nobody releases the leader key; the other node must wait for it to expire.
   */
  killHost(): void {
    const postmaster = this.postmasterPid();
    killAll([this.daemon.pid!, ...(postmaster ? processTree(postmaster) : [])]);
  }

  /** Patroni stops its PostgreSQL and exits on SIGTERM; whatever is left after that is killed. */
  async stop(): Promise<void> {
    await this.daemon.stop('SIGTERM', 15_000);
    const postmaster = this.postmasterPid();
    if (postmaster) killAll(processTree(postmaster));
  }

  logTail(lines = 30): string {
    return this.daemon.logTail(lines);
  }
}

/**
 * patroni.yml. synchronous_mode: the leader names the other node in synchronous_standby_names, so
 * a commit is acknowledged only once the standby has it too, and Patroni promotes only that
 * standby: a failover loses no acknowledged commit. (Not synchronous_mode_strict: alone, the
 * leader goes on accepting writes rather than blocking them until a standby returns.)
 */
function nodeConfig(name: string, dir: string, pgPort: number, apiPort: number, etcdPort: number) {
  return {
    scope: 'latchkey',
    name,
    log: { level: 'INFO' },
    restapi: { listen: `127.0.0.1:${apiPort}`, connect_address: `127.0.0.1:${apiPort}` },
    etcd3: { hosts: `127.0.0.1:${etcdPort}` },
    bootstrap: {
      dcs: {
        ...TIMING,
        maximum_lag_on_failover: 1048576,
        synchronous_mode: true,
        postgresql: {
          use_pg_rewind: true,
          parameters: { wal_log_hints: 'on', max_wal_senders: 10, max_replication_slots: 10 },
        },
      },
      initdb: [{ encoding: 'UTF8' }, { locale: 'C' }],
      // The test's own machine: trust on loopback (a real cluster uses scram-sha-256 and TLS).
      pg_hba: ['local all all trust', 'host all all 127.0.0.1/32 trust', 'host replication all 127.0.0.1/32 trust'],
    },
    postgresql: {
      listen: `127.0.0.1:${pgPort}`,
      connect_address: `127.0.0.1:${pgPort}`,
      data_dir: join(dir, 'data'),
      bin_dir: POSTGRES_BIN,
      pgpass: join(dir, 'pgpass'),
      authentication: {
        superuser: { username: 'postgres', password: 'postgres' },
        replication: { username: 'replicator', password: 'replicator' },
      },
      parameters: { unix_socket_directories: dir },
    },
  };
}
