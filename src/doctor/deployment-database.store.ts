import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { DataSource } from 'typeorm';

/** The migration record's table (TypeORM's default, which data-source.options.ts keeps). */
const MIGRATIONS_TABLE = 'migrations';

/** What doctor asks a deployment's database, read only. */
export class DeploymentDatabaseStore {
  constructor(private readonly dataSource: DataSource) {}

  private get postgres(): boolean {
    return this.dataSource.options.type === 'postgres';
  }

  /** One round trip, timed. */
  async ping(): Promise<number> {
    const started = performance.now();
    await this.dataSource.query('SELECT 1');
    return performance.now() - started;
  }

  /** PostgreSQL's clock (SQLite has none of its own: it is this machine's). */
  async postgresNow(): Promise<Date> {
    const [{ now }] = (await this.dataSource.query('SELECT now() AS now')) as { now: Date }[];
    return now;
  }

  /** PostgreSQL's connection limit, what is reserved for superusers, and the connections open now. */
  async connections(): Promise<{ max: number; reserved: number; open: number }> {
    const [row] = (await this.dataSource.query(
      `SELECT current_setting('max_connections')::int AS max, current_setting('superuser_reserved_connections')::int AS reserved, (SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend')::int AS open`,
    )) as { max: number; reserved: number; open: number }[];
    return row;
  }

  /** The names of the applied migrations, or [] when the record does not exist (nothing applied). */
  async appliedMigrations(): Promise<string[]> {
    const exists = this.postgres
      ? ((await this.dataSource.query(`SELECT to_regclass($1) IS NOT NULL AS found`, [MIGRATIONS_TABLE])) as { found: boolean }[])[0].found
      : ((await this.dataSource.query(`SELECT count(*) AS found FROM sqlite_master WHERE type = 'table' AND name = ?`, [MIGRATIONS_TABLE])) as { found: number }[])[0].found > 0;
    if (!exists) return [];
    return ((await this.dataSource.query(`SELECT "name" FROM "${MIGRATIONS_TABLE}" ORDER BY "id"`)) as { name: string }[]).map((row) => row.name);
  }
}

/** How long a notification may take to come back before the connection is said not to deliver them. */
const NOTIFICATION_WAIT_MS = 1500;

/**
 * Whether a connection to `url` hears its own NOTIFY: a LISTEN on one connection, a NOTIFY sent
 * from another, and the notification awaited. PostgreSQL itself and a pooler in session mode
 * deliver it; a pooler in transaction mode (PgBouncer) answers the LISTEN and never delivers,
 * since it hands the server connection that listens to other clients once the LISTEN's
 * transaction ends. Rejects when `url` cannot be reached.
 */
export async function hearsItsOwnNotification(url: string): Promise<boolean> {
  const channel = `latchkey_doctor_${randomBytes(6).toString('hex')}`;
  const token = randomBytes(9).toString('base64url');
  const listener = new pg.Client({ connectionString: url, application_name: 'latchkey doctor' });
  const sender = new pg.Client({ connectionString: url, application_name: 'latchkey doctor' });
  // A pooler may drop the connection once the notification arrives with nobody to give it to.
  listener.on('error', () => undefined);
  sender.on('error', () => undefined);
  try {
    await Promise.all([listener.connect(), sender.connect()]);
    const heard = new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), NOTIFICATION_WAIT_MS);
      listener.on('notification', (message) => {
        if (message.channel !== channel || message.payload !== token) return;
        clearTimeout(timer);
        resolve(true);
      });
    });
    await listener.query(`LISTEN "${channel}"`);
    await sender.query('SELECT pg_notify($1, $2)', [channel, token]);
    return await heard;
  } finally {
    await Promise.allSettled([listener.end(), sender.end()]);
  }
}
