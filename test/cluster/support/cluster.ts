/**
 * The deployment of docker-compose.yml on loopback: a fresh PostgreSQL schema migrated once by the
 * CLI, three instances sharing it, Redis and one session secret, nginx in front. Or, as the run's
 * topology says (CLUSTER_TOPOLOGY), HAProxy in front and PgBouncer in transaction mode between the
 * instances and a database of their own. Everything it creates, it removes in stop().
 */
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { type Balancer, createBalancer } from './balancer.js';
import { type ClusterDatabase, clusterDatabase } from './database.js';
import { Instance } from './instance.js';
import { freePorts } from '../../helpers/free-port.js';
import { RATE_LIMIT_KEY_PREFIX, REDIS_URL, sharedEnv, TOPOLOGY } from './settings.js';

export interface ClusterClient {
  clientId: string;
  clientSecret: string;
  redirectUri: string;
}

/**
 * Wraps a test body so that, when it fails, the error carries the tail of every instance's log.
 * `cluster` is read when the body runs (the cluster starts in beforeAll, after the tests are declared).
 */
export function withClusterLogs(cluster: () => Cluster): (body: () => Promise<void>) => () => Promise<void> {
  return (body) => async () => {
    try {
      await body();
    } catch (error) {
      if (error instanceof Error) error.message += `\n\nLogs (${process.env.CLUSTER_DIR}):\n${cluster().logs()}`;
      throw error;
    }
  };
}

export class Cluster {
  private constructor(
    readonly instances: Instance[],
    readonly balancer: Balancer,
    private readonly database: ClusterDatabase,
    private readonly env: Record<string, string>,
  ) {}

  /**
   * `settings`: environment variables a test file needs beyond the production contract (e.g.
   * OUTBOUND_ALLOW_PRIVATE_NETWORKS for a receiver on loopback), given to every instance and every
   * CLI run of this cluster only, so other files keep the production defaults.
   */
  static async start(size = 3, settings: Record<string, string> = {}): Promise<Cluster> {
    const [balancerPort, poolerPort, ...ports] = await freePorts(2 + 2 * size);
    const database = clusterDatabase(TOPOLOGY.poolMode, poolerPort);
    const env = { ...sharedEnv(`https://127.0.0.1:${balancerPort}`, randomBytes(36).toString('base64url'), database.env), ...settings };
    const instances = Array.from({ length: size }, (_, i) => {
      const [port, metricsPort] = [ports[2 * i], ports[2 * i + 1]];
      return new Instance(`instance-${i + 1}`, port, { ...env, PORT: String(port), METRICS_PORT: String(metricsPort) });
    });
    const cluster = new Cluster(instances, createBalancer(TOPOLOGY, balancerPort, instances), database, env);
    try {
      await database.create();
      cluster.cli('migrations:run');
      await Promise.all(instances.map((i) => i.start()));
      await cluster.balancer.start();
      return cluster;
    } catch (error) {
      // Nothing of a half-started cluster may outlive the test run.
      const logs = cluster.logs();
      await cluster.stop();
      throw new Error(`The cluster did not start: ${(error as Error).message}\n${logs}`, { cause: error });
    }
  }

  get baseUrl(): string {
    return this.balancer.baseUrl;
  }

  get issuer(): string {
    return this.env.ISSUER;
  }

  /** The instance the balancer names in X-Upstream (nginx's last address, when it moved on to another). */
  instanceOf(upstream: string | null): Instance | undefined {
    const last = upstream?.split(',').pop()?.trim();
    return this.instances.find((i) => i.address === last);
  }

  /** Runs the admin CLI against the cluster's database, as an operator would; returns its JSON. */
  cli(...args: string[]): unknown {
    const result = spawnSync(process.execPath, ['dist/src/cli/main.js', ...args], { env: this.env, encoding: 'utf8' });
    if (result.status !== 0) throw new Error(`latchkey ${args[0]} failed (${result.status}): ${result.stderr}`);
    return JSON.parse(result.stdout) as unknown;
  }

  /**
   * The admin CLI with `settings` over the cluster's environment (an operator's mistake, say),
   * whatever its exit status (doctor exits 1 when a check fails): the status and the JSON it printed.
   */
  cliWith(settings: Record<string, string>, ...args: string[]): { status: number | null; output: unknown } {
    const result = spawnSync(process.execPath, ['dist/src/cli/main.js', ...args], { env: { ...this.env, ...settings }, encoding: 'utf8' });
    if (!result.stdout.trim()) throw new Error(`latchkey ${args[0]} printed nothing (${result.status}): ${result.stderr}`);
    return { status: result.status, output: JSON.parse(result.stdout) as unknown };
  }

  /**
   * The same as cli(), without blocking this process while the command runs (a few hundred ms of
   * start-up): for a command run in the middle of a load the test process itself generates.
   */
  cliInBackground(...args: string[]): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, ['dist/src/cli/main.js', ...args], { env: this.env, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.once('error', reject);
      child.once('close', (status) => {
        if (status !== 0) reject(new Error(`latchkey ${args[0]} failed (${status}): ${stderr}`));
        else resolve(JSON.parse(stdout) as unknown);
      });
    });
  }

  /** `profile`: users:create's profile flags, e.g. '--email', 'alice@example.com'. Returns the user's id. */
  createUser(username: string, password: string, ...profile: string[]): string {
    return (this.cli('users:create', '--username', username, '--password', password, ...profile) as { id: string }).id;
  }

  /** A confidential client (client_secret_basic) with the given grants and scope; `extra`: more clients:create flags. */
  createClient(name: string, grantTypes: string[], scope: string, redirectUri?: string, extra: string[] = []): ClusterClient {
    const args = ['clients:create', '--name', name, '--scope', scope, ...grantTypes.flatMap((g) => ['--grant-type', g])];
    if (redirectUri) args.push('--redirect-uri', redirectUri);
    args.push(...extra);
    const view = this.cli(...args) as { client_id: string; client_secret: string };
    return { clientId: view.client_id, clientSecret: view.client_secret, redirectUri: redirectUri ?? '' };
  }

  /** Runs one SQL statement in the cluster's schema or database and returns its rows (what the instances recorded). */
  query<T = Record<string, unknown>>(sql: string, params: unknown[] = []): Promise<T[]> {
    return this.database.query<T>(sql, params);
  }

  /** PgBouncer's figures (client and PostgreSQL connections, transactions), when the topology has it. */
  poolerFigures(): Promise<Record<string, number> | undefined> {
    return this.database.figures();
  }

  /** The last lines of every log, for a failing test's output. */
  logs(): string {
    const sections = this.instances.map((i) => `--- ${i.name} (${i.address}) ---\n${i.logTail()}`);
    return [...sections, ...this.database.logs(), `--- ${this.balancer.name} ---\n${this.balancer.logTail()}`].join('\n');
  }

  async stop(): Promise<void> {
    await this.balancer.stop();
    await Promise.all(this.instances.map((i) => i.stop()));
    await Promise.allSettled([this.database.drop(), flushRedisPrefix()]);
  }
}

/** Deletes this run's rate-limit counters (every key under RATE_LIMIT_KEY_PREFIX). */
async function flushRedisPrefix(): Promise<void> {
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${RATE_LIMIT_KEY_PREFIX}*`, 'COUNT', 500);
      if (keys.length > 0) await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}
