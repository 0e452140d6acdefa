/**
 * What scripts/test-cluster.mjs prepared for this run, and the shared services it runs against.
 * The instances get their configuration from here, not from this process's environment.
 */
import { createHash, randomBytes } from 'node:crypto';

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run the cluster test through scripts/test-cluster.mjs (npm run test:cluster)`);
  return value;
}

export const CLUSTER_DIR = required('CLUSTER_DIR');
export const CERT_FILE = required('CLUSTER_CERT');
export const KEY_FILE = required('CLUSTER_KEY');
export const DATABASE_URL = process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
export const REDIS_URL = process.env.TEST_REDIS_URL || 'redis://127.0.0.1:6379';

/**
 * What stands between the clients, the instances and PostgreSQL (CLUSTER_TOPOLOGY, which
 * scripts/test-cluster.mjs sets): `nginx` (docker-compose.yml) or `haproxy` in front, and with
 * `-pgbouncer` PgBouncer in transaction mode between the instances and PostgreSQL
 * (`-pgbouncer-session`: in session mode).
 */
export interface Topology {
  name: string;
  balancer: 'nginx' | 'haproxy';
  /** The balancer as test titles name it. */
  balancerName: string;
  pgbouncer: boolean;
  /** PgBouncer's pool_mode, when it is in the topology. */
  poolMode?: 'transaction' | 'session';
  /** What the instances are behind, for test titles: "nginx", "HAProxy and PgBouncer (transaction mode)". */
  label: string;
}

function topology(name: string): Topology {
  const match = /^(nginx|haproxy)(-pgbouncer(-session)?)?$/.exec(name);
  if (!match) throw new Error(`CLUSTER_TOPOLOGY=${name}: expected nginx or haproxy, then nothing, -pgbouncer or -pgbouncer-session`);
  const balancer = match[1] as Topology['balancer'];
  const balancerName = balancer === 'haproxy' ? 'HAProxy' : 'nginx';
  const pgbouncer = match[2] !== undefined;
  const poolMode = pgbouncer ? (match[3] ? 'session' : 'transaction') : undefined;
  return { name, balancer, balancerName, pgbouncer, poolMode, label: pgbouncer ? `${balancerName} and PgBouncer (${poolMode} mode)` : balancerName };
}

export const TOPOLOGY = topology(process.env.CLUSTER_TOPOLOGY || 'nginx');

/** Names unique to this run, so runs never share a schema, a database or rate-limit counters. */
const runId = `${process.pid}_${randomBytes(3).toString('hex')}`;
export const SCHEMA = `latchkey_cluster_${runId}`;
/** The run's own database, where a schema cannot be used (behind PgBouncer: support/database.ts). */
export const RUN_DATABASE = `latchkey_cluster_${runId}`;
export const RATE_LIMIT_KEY_PREFIX = `latchkey_cluster_${runId}:`;

/**
 * The environment every instance and every CLI run gets: the contract of a production deployment
 * (see docker-compose.yml), plus this run's database schema and Redis prefix. `database`, when
 * given, replaces the DATABASE_* settings (support/database.ts: a database behind PgBouncer).
 */
export function sharedEnv(issuer: string, sessionSecret: string, database?: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    // Marks the processes of this run, so scripts/test-cluster.mjs can stop leftovers safely.
    CLUSTER_DIR,
    NODE_ENV: 'production',
    HOST: '127.0.0.1',
    ISSUER: issuer,
    TRUST_PROXY: '127.0.0.1',
    DATABASE_URL,
    DATABASE_SCHEMA: SCHEMA,
    MIGRATIONS_RUN: 'false',
    SESSION_SECRET: sessionSecret,
    // One key for every instance (it must be shared, like the session secret), derived from this run's secret.
    TOKEN_ENCRYPTION_KEY: createHash('sha256').update(`token-encryption:${sessionSecret}`).digest('base64'),
    SIGNING_KEY_ENCRYPTION_KEY: createHash('sha256').update(`signing-key-encryption:${sessionSecret}`).digest('base64'),
    FACTOR_ENCRYPTION_KEY: createHash('sha256').update(`factor-encryption:${sessionSecret}`).digest('base64'),
    REDIS_URL,
    RATE_LIMIT_KEY_PREFIX,
    // Counted in Redis as in production, but too high to be reached: the limits are not under test here.
    RATE_LIMIT_CLIENT_PER_MINUTE: '1000000',
    RATE_LIMIT_API_PER_MINUTE: '1000000',
    LOG_LEVEL: 'warn',
  };
  if (!database) return env;
  for (const name of Object.keys(env).filter((key) => key.startsWith('DATABASE_'))) delete env[name];
  return { ...env, ...database };
}
