/**
 * Where a cluster keeps its data, and how the instances reach it: a schema of its own in the test
 * database, the instances connected straight to PostgreSQL; or, behind PgBouncer in transaction
 * mode, a database of its own. Both are created by create() and removed by drop(), and the tests'
 * own SQL (query()) reads what the instances wrote, straight from PostgreSQL.
 */
import { withPg } from '../../helpers/test-database.js';
import { PgBouncer } from './pgbouncer.js';
import { DATABASE_URL, RUN_DATABASE, SCHEMA } from './settings.js';

export interface ClusterDatabase {
  /** The DATABASE_* settings of the instances and the CLI. */
  readonly env: Record<string, string>;
  create(): Promise<void>;
  /** Runs one SQL statement where the instances keep their tables; returns its rows. */
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  /** Log sections of the processes it runs, for a failing test's output. */
  logs(): string[];
  /** What the pooler in front of it reports (PgBouncer's connections and transactions), if there is one. */
  figures(): Promise<Record<string, number> | undefined>;
  drop(): Promise<void>;
}

/** A schema of its own in the test database (DATABASE_SCHEMA), as every other test suite uses PostgreSQL. */
class OwnSchema implements ClusterDatabase {
  readonly env = { DATABASE_URL, DATABASE_SCHEMA: SCHEMA };

  async create(): Promise<void> {
    await withPg(DATABASE_URL, (client) => client.query(`CREATE SCHEMA "${SCHEMA}"`));
  }

  query<T>(sql: string, params: unknown[] = []): Promise<T[]> {
    return withPg(DATABASE_URL, async (client) => {
      await client.query(`SET search_path TO "${SCHEMA}"`);
      return (await client.query(sql, params)).rows as T[];
    });
  }

  logs(): string[] {
    return [];
  }

  figures(): Promise<undefined> {
    return Promise.resolve(undefined);
  }

  async drop(): Promise<void> {
    await withPg(DATABASE_URL, (client) => client.query(`DROP SCHEMA IF EXISTS "${SCHEMA}" CASCADE`));
  }
}

/**
 * A database of its own (schema public) behind PgBouncer in transaction mode (or in session mode, where
 * the instances need no setting of their own), as
 * docs/operations/scaling-limits.md recommends beyond a handful of instances: DATABASE_URL goes through PgBouncer
 * with DATABASE_POOL_MODE=transaction; the one LISTEN connection per instance goes straight to
 * PostgreSQL (DATABASE_LISTEN_URL), so the per-instance caches stay on. No DATABASE_SCHEMA:
 * PgBouncer 1.18 refuses the `options` startup parameter that would carry it.
 */
class OwnDatabaseBehindPgBouncer implements ClusterDatabase {
  private readonly pgbouncer: PgBouncer;
  /** The run's database, straight on PostgreSQL. */
  private readonly directUrl: string;
  readonly env: Record<string, string>;

  constructor(port: number, poolMode: 'transaction' | 'session') {
    const direct = new URL(DATABASE_URL);
    direct.pathname = `/${RUN_DATABASE}`;
    this.directUrl = direct.href;
    const pooled = new URL(direct.href);
    pooled.hostname = '127.0.0.1';
    pooled.port = String(port);
    // PgBouncer logs in to PostgreSQL as the test database's user (auth_type = any: it ignores the
    // user the client names).
    const server = [
      `host=${direct.hostname}`,
      `port=${direct.port || '5432'}`,
      `dbname=${RUN_DATABASE}`,
      `user=${decodeURIComponent(direct.username || 'postgres')}`,
      ...(direct.password ? [`password=${decodeURIComponent(direct.password)}`] : []),
    ];
    this.pgbouncer = new PgBouncer(port, { [RUN_DATABASE]: server.join(' ') }, decodeURIComponent(direct.username || 'postgres'), poolMode);
    // Session mode: a server connection per client connection, so named statements and LISTEN go
    // through PgBouncer as they would go to PostgreSQL (docs/operations/connection-pooler.md).
    this.env = poolMode === 'transaction' ? { DATABASE_URL: pooled.href, DATABASE_POOL_MODE: 'transaction', DATABASE_LISTEN_URL: this.directUrl } : { DATABASE_URL: pooled.href };
  }

  async create(): Promise<void> {
    await withPg(DATABASE_URL, (client) => client.query(`CREATE DATABASE "${RUN_DATABASE}"`));
    await this.pgbouncer.start(this.env.DATABASE_URL);
  }

  query<T>(sql: string, params: unknown[] = []): Promise<T[]> {
    return withPg(this.directUrl, async (client) => (await client.query(sql, params)).rows as T[]);
  }

  logs(): string[] {
    return [`--- PgBouncer ---\n${this.pgbouncer.logTail()}`];
  }

  figures(): Promise<Record<string, number>> {
    return this.pgbouncer.figures();
  }

  async drop(): Promise<void> {
    await this.pgbouncer.stop();
    // FORCE: ends whatever session is left (a LISTEN connection of an instance that did not stop).
    await withPg(DATABASE_URL, (client) => client.query(`DROP DATABASE IF EXISTS "${RUN_DATABASE}" WITH (FORCE)`));
  }
}

/** The cluster's database for this run's topology; `pgbouncerPort`: where PgBouncer listens, if it is in it. */
export function clusterDatabase(poolMode: 'transaction' | 'session' | undefined, pgbouncerPort: number): ClusterDatabase {
  return poolMode ? new OwnDatabaseBehindPgBouncer(pgbouncerPort, poolMode) : new OwnSchema();
}
