/**
 * Latchkey on a highly available PostgreSQL, on loopback: etcd, two Patroni nodes with synchronous
 * replication, HAProxy routing to the leader (deploy/haproxy-postgres.cfg), a database migrated
 * once by the CLI through HAProxy, and two instances whose DATABASE_URL is HAProxy's. Everything
 * it starts, stop() ends; the run's directory (scripts/test-failover.mjs) holds the data and logs.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { Instance } from '../../cluster/support/instance.js';
import { freePorts } from '../../helpers/free-port.js';
import { sharedEnv } from '../../cluster/support/settings.js';
import { waitUntil } from './daemon.js';
import { Etcd } from './etcd.js';
import { HAProxy } from './haproxy.js';
import { PatroniNode, type Member } from './patroni.js';

const DATABASE = 'latchkey';

export class Deployment {
  private constructor(
    readonly etcd: Etcd,
    readonly nodes: PatroniNode[],
    readonly haproxy: HAProxy,
    readonly instances: Instance[],
    /** The instances' environment, for the CLI. */
    readonly env: Record<string, string>,
  ) {}

  static async start(): Promise<Deployment> {
    const [etcdClient, etcdPeer, pg1, api1, pg2, api2, haproxyPort, issuerPort, ...instancePorts] = await freePorts(12);
    const etcd = new Etcd(etcdClient, etcdPeer);
    const nodes = [new PatroniNode('node1', pg1, api1, etcdClient), new PatroniNode('node2', pg2, api2, etcdClient)];
    const haproxy = new HAProxy(haproxyPort, nodes);
    // The production contract of test/cluster, with DATABASE_URL at HAProxy: a database of its own
    // rather than the cluster test's schema (nothing else lives in this PostgreSQL).
    const { DATABASE_SCHEMA: _schema, ...shared } = sharedEnv(`https://127.0.0.1:${issuerPort}`, randomBytes(36).toString('base64url'));
    const env = { ...shared, DATABASE_URL: haproxy.url(DATABASE) };
    const instances = [0, 1].map((i) => {
      const [port, metricsPort] = [instancePorts[2 * i], instancePorts[2 * i + 1]];
      return new Instance(`instance-${i + 1}`, port, { ...env, PORT: String(port), METRICS_PORT: String(metricsPort) });
    });
    const deployment = new Deployment(etcd, nodes, haproxy, instances, env);
    try {
      await etcd.start();
      // Both at once: one wins the race to initialise the cluster, the other copies it (pg_basebackup).
      for (const node of nodes) node.start();
      await deployment.waitForSteadyLeader(nodes, 60_000);
      await haproxy.start();
      await deployment.withPg('postgres', (client) => client.query(`CREATE DATABASE ${DATABASE}`));
      deployment.cli('migrations:run');
      await Promise.all(instances.map((i) => i.start()));
      return deployment;
    } catch (error) {
      const logs = deployment.logs();
      await deployment.stop();
      throw new Error(`The deployment did not start: ${(error as Error).message}\n${logs}`, { cause: error });
    }
  }

  /** The cluster as the first node that answers reports it (undefined: none answers). */
  async members(): Promise<Member[] | undefined> {
    for (const node of this.nodes) {
      const members = await node.members();
      if (members) return members;
    }
    return undefined;
  }

  /**
   * Waits until one of `nodes` leads and every other one of them is its synchronous standby, as
   * each node's PostgreSQL says it now (not only as etcd last heard): the leader a primary with a
   * walsender in sync state to each standby, each standby a running replica named in etcd's sync
   * state (the only one Patroni may promote). A leader that can fail over without loss.
   */
  async waitForSteadyLeader(nodes: PatroniNode[], timeoutMs: number): Promise<PatroniNode> {
    let leader: PatroniNode | undefined;
    let seen: unknown;
    await waitUntil(async () => {
      const members = await this.members();
      const statuses = new Map(await Promise.all(nodes.map(async (n) => [n.name, await n.status()] as const)));
      seen = { members, statuses: Object.fromEntries(statuses) };
      const byName = new Map((members ?? []).map((m) => [m.name, m]));
      const lead = nodes.find((n) => byName.get(n.name)?.role === 'leader');
      const leadStatus = lead && statuses.get(lead.name);
      const steady = leadStatus?.state === 'running' && leadStatus.role === 'master' && nodes.filter((n) => n !== lead).every((n) => {
        const status = statuses.get(n.name);
        const walsender = leadStatus.replication?.find((r) => r.application_name === n.name);
        return status?.state === 'running' && status.role === 'replica' && status.sync_standby === true
          && walsender?.state === 'streaming' && walsender.sync_state === 'sync';
      });
      leader = steady ? lead : undefined;
      return steady;
    }, timeoutMs, () => `a steady leader among ${nodes.map((n) => n.name).join(', ')} (last seen: ${JSON.stringify(seen)})`, 250);
    return leader!;
  }

  /** Runs the admin CLI as an operator would, with the instances' environment; returns its JSON. */
  cli(...args: string[]): unknown {
    const result = spawnSync(process.execPath, ['dist/src/cli/main.js', ...args], { env: this.env, encoding: 'utf8' });
    if (result.status !== 0) throw new Error(`latchkey ${args[0]} failed (${result.status}): ${result.stderr}`);
    return result.stdout.trim() ? (JSON.parse(result.stdout) as unknown) : undefined;
  }

  /** One SQL statement in Latchkey's database, through HAProxy (on the leader): its rows. */
  query<T = Record<string, unknown>>(sql: string, params: unknown[] = []): Promise<T[]> {
    return this.withPg(DATABASE, async (client) => (await client.query(sql, params)).rows as T[]);
  }

  private async withPg<T>(database: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
    const client = new pg.Client({ connectionString: this.haproxy.url(database) });
    await client.connect();
    try {
      return await work(client);
    } finally {
      await client.end();
    }
  }

  /** The last lines of every log, for a failing test's output. */
  logs(): string {
    return [
      ...this.instances.map((i) => `--- ${i.name} ---\n${i.logTail(20)}${i.unexpectedErrors().map((e) => `\n--- ${i.name}: a 500 ---\n${e}`).join('')}`),
      ...this.nodes.map((n) => `--- ${n.name} (Patroni, PostgreSQL) ---\n${n.logTail(25)}`),
      `--- haproxy ---\n${this.haproxy.logTail()}`,
      `--- etcd ---\n${this.etcd.logTail()}`,
    ].join('\n');
  }

  async stop(): Promise<void> {
    await Promise.all(this.instances.map((i) => i.stop()));
    await this.haproxy.stop();
    await Promise.all(this.nodes.map((n) => n.stop()));
    await this.etcd.stop();
  }
}
