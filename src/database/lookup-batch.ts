import type { DataSource } from 'typeorm';
import { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver.js';
import { PreparedStatement, postgresPool, statementName } from './prepared-statement.js';

type Row = Record<string, unknown>;

interface Waiter {
  resolve: (row: Row | undefined) => void;
  reject: (reason: unknown) => void;
}

/** Keys per statement: one ANY($1) array; more would only make one answer wait for a larger one. */
const MAX_KEYS = 256;

/**
 * Group reads for PostgreSQL's hottest single-row lookups by a unique key (an item by id, a code by
 * its hash): the keys that requests ask for during one turn of the event loop are read by one
 * `SELECT … WHERE key = ANY($1)` on the next turn, and each caller gets its row (or undefined). A busy instance then pays one round trip for many requests instead of one each;
 * the round trip, not the index lookup, is what a read costs the server (bench/RESULTS.md, "The
 * cost model"). Alone in its turn, a key is read by the single-row prepared statement, as before.
 * Tokens are not read through it: an access token is kept per instance (TokenStore), and for the
 * refresh token of a rotation an A/B showed no gain (bench/RESULTS.md).
 *
 * Nothing is kept: every read is issued after the request that asked for it arrived, so it sees
 * every change committed before that (read-your-writes, on any instance), exactly as one statement
 * per request did. The same key asked twice in one turn is read once and both callers get that row
 * (they decode it into entities of their own; the row is not changed). A batch that fails is read
 * again key by key, so only the key at fault fails, with the driver's own error (a lost database is
 * still recognised, database-unavailable.ts). SQLite reads are function calls in the process: there
 * the prepared statement runs directly.
 */
export class LookupBatch {
  private queue = new Map<string, Waiter[]>();
  /** A key alone in its turn, and every key on SQLite. */
  private readonly single: PreparedStatement<Row>;
  /** PostgreSQL: the SELECT of many keys, and its statement name (statementName). */
  private readonly batchSql?: string;
  private readonly batchName?: string;

  /**
   * `select` is `SELECT <columns> FROM <table>`, `keyColumn` the unique column looked up, and
   * `keyProperty` the name under which a row carries it (the select list's alias).
   */
  constructor(
    private readonly dataSource: DataSource,
    private readonly name: string,
    select: string,
    keyColumn: string,
    private readonly keyProperty: string,
  ) {
    this.single = new PreparedStatement(dataSource, name, `${select} WHERE "${keyColumn}" = ?`);
    if (dataSource.driver instanceof PostgresDriver) this.batchSql = `${select} WHERE "${keyColumn}" = ANY($1)`;
    this.batchName = statementName(dataSource, `${name}_any`);
  }

  /** The row whose key is `key`, or undefined. */
  one(key: string): Promise<Row | undefined> {
    if (this.batchSql === undefined) return this.single.one(key);
    return new Promise<Row | undefined>((resolve, reject) => {
      if (this.queue.size === 0) setImmediate(() => this.flush());
      const waiting = this.queue.get(key);
      if (waiting) waiting.push({ resolve, reject });
      else this.queue.set(key, [{ resolve, reject }]);
    });
  }

  private flush(): void {
    const batch = this.queue;
    this.queue = new Map();
    const keys = [...batch.keys()];
    for (let at = 0; at < keys.length; at += MAX_KEYS) void this.read(keys.slice(at, at + MAX_KEYS), batch);
  }

  private async read(keys: string[], batch: Map<string, Waiter[]>): Promise<void> {
    let rows: Map<string, Row>;
    try {
      rows = keys.length === 1 ? await this.readOne(keys[0]) : await this.readMany(keys);
    } catch (error) {
      if (keys.length === 1) {
        for (const waiter of batch.get(keys[0])!) waiter.reject(error);
        return;
      }
      // Each key on its own, at once: when the database is down, nobody waits for the others' failures.
      await Promise.all(keys.map((key) => this.read([key], batch)));
      return;
    }
    for (const key of keys) for (const waiter of batch.get(key)!) waiter.resolve(rows.get(key));
  }

  private async readOne(key: string): Promise<Map<string, Row>> {
    const row = await this.single.one(key);
    return new Map(row === undefined ? [] : [[key, row]]);
  }

  private async readMany(keys: string[]): Promise<Map<string, Row>> {
    const result = await postgresPool(this.dataSource).query({ name: this.batchName, text: this.batchSql!, values: [keys] });
    return new Map(result.rows.map((row) => [String(row[this.keyProperty]), row]));
  }
}
