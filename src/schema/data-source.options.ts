import type { DataSourceOptions } from 'typeorm';
import type { DatabaseConfig } from '../config/database.config.js';
import { UNNAMED_STATEMENTS } from '../database/prepared-statement.js';
import { beginTransactionsAsWriters } from '../database/sqlite-write-transactions.js';
import { ENTITIES } from './entities.js';
import { MIGRATIONS } from './migrations/index.js';

/**
 * The one description of Latchkey's database, shared by the Nest app (DatabaseModule), ormconfig.ts
 * (TypeORM's CLI) and Latchkey's own CLI. `synchronize` is never on: the schema comes from migrations.
 */
export function buildDataSourceOptions(config: DatabaseConfig): DataSourceOptions {
  const common = {
    entities: ENTITIES,
    migrations: MIGRATIONS,
    migrationsRun: config.migrationsRun,
    migrationsTransactionMode: 'each',
    synchronize: false,
    logging: config.logging,
  } as const;
  if (config.dialect === 'sqlite') {
    return {
      ...common,
      type: 'better-sqlite3',
      database: config.sqlitePath ?? 'data/latchkey.sqlite',
      // WAL lets the CLI and the server use the file at once; a busy writer is waited for (the busy
      // timeout, in ms), not failed, as long as transactions begin as writers (below).
      enableWAL: true,
      timeout: 5000,
      prepareDatabase: (db: { pragma(source: string): unknown; prepare(source: string): unknown }) => {
        // In WAL mode NORMAL syncs at checkpoints, not at every commit: the database stays consistent
        // whatever happens, and a crash of the process loses nothing; a power cut may lose the last
        // commits (SQLite's documentation, "PRAGMA synchronous"). FULL made every token issued wait for
        // an fsync, a fifth of its time (bench/RESULTS.md). For durability across power cuts, PostgreSQL.
        db.pragma('synchronous = NORMAL');
        // BEGIN IMMEDIATE, so that a write waits for another connection's instead of failing (issue 43).
        beginTransactionsAsWriters(db);
      },
    };
  }
  return {
    ...common,
    type: 'postgres',
    url: config.url,
    poolSize: config.poolSize,
    extra: {
      // A database that does not answer fails the request (503) instead of holding it forever.
      connectionTimeoutMillis: 5000,
      // A non-default schema is put first on every connection's search_path, so that entities,
      // migrations and the migrations table all live in it. It must exist beforehand. (Never
      // through a transaction pooler: database.config.ts refuses the pair.)
      ...(config.schema ? { options: `-c search_path=${config.schema}` } : {}),
      // Read by statementName(): through a transaction pooler, every statement is unnamed.
      ...(config.poolMode === 'transaction' ? { [UNNAMED_STATEMENTS]: true } : {}),
    },
  };
}
