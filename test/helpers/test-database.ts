import { rm } from 'node:fs/promises';
import pg from 'pg';
import { readDatabaseConfig } from '../../src/config/database.config.js';

/** Creates this test file's PostgreSQL schema (SQLite files are created by the driver); `env`: another database of the file's. */
export async function createTestDatabase(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const config = readDatabaseConfig(env);
  if (config.dialect !== 'postgres' || !config.schema) return;
  await withPg(config.url, (client) => client.query(`CREATE SCHEMA IF NOT EXISTS "${config.schema}"`));
}

/** Removes this test file's schema or SQLite file; `env`: another database of the file's. */
export async function dropTestDatabase(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const config = readDatabaseConfig(env);
  if (config.dialect === 'postgres') {
    if (config.schema) await withPg(config.url, (client) => client.query(`DROP SCHEMA IF EXISTS "${config.schema}" CASCADE`));
    return;
  }
  const path = config.sqlitePath!;
  await Promise.all([path, `${path}-wal`, `${path}-shm`].map((p) => rm(p, { force: true })));
}

/** Connects to `url`, runs `work`, disconnects. */
export async function withPg<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}
