import pg from 'pg';
import type { DataSource } from 'typeorm';
import { AbstractSqliteDriver } from 'typeorm/driver/sqlite-abstract/AbstractSqliteDriver.js';

type Method = (this: unknown, ...args: unknown[]) => unknown;
type Methods = Record<string, Method>;
interface SqliteDatabase {
  prepare(sql: string): object;
}

/**
 * The SQL of every statement the application sends to its database while `work` runs (in this
 * process, so a background job's statements may be among them: filter for the table you mean).
 * The drivers themselves are wrapped (node-postgres's Client.query; the methods that run a
 * better-sqlite3 statement), so the statements prepared outside TypeORM (PreparedStatement,
 * ConsentStore.signedIn) are seen as well as TypeORM's.
 */
export async function statementsSentDuring(dataSource: DataSource, work: () => Promise<unknown>): Promise<string[]> {
  const sent: string[] = [];
  const driver = dataSource.driver;
  const [target, names, sqlOf]: [Methods, string[], (self: unknown, args: unknown[]) => string] =
    driver instanceof AbstractSqliteDriver
      ? [sqliteStatementPrototype(driver.databaseConnection as SqliteDatabase), ['get', 'all', 'run', 'iterate'], (self) => (self as { source: string }).source]
      : [pg.Client.prototype as unknown as Methods, ['query'], (_self, args) => (typeof args[0] === 'string' ? args[0] : (args[0] as { text: string }).text)];
  const originals = names.map((name) => [name, target[name]] as const);
  for (const [name, original] of originals) {
    target[name] = function (this: unknown, ...args: unknown[]) {
      sent.push(sqlOf(this, args));
      return original.apply(this, args);
    };
  }
  try {
    await work();
  } finally {
    for (const [name, original] of originals) target[name] = original;
  }
  return sent;
}

/** The prototype better-sqlite3's statements share, whose methods run them (each statement knows its SQL as `source`). */
function sqliteStatementPrototype(connection: SqliteDatabase): Methods {
  return Object.getPrototypeOf(connection.prepare('SELECT 1')) as Methods;
}
