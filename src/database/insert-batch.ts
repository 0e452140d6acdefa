import type { DataSource } from 'typeorm';
import { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver.js';
import { isDatabaseUnavailable } from './database-unavailable.js';
import { namesStatements, placeholders, postgresPool } from './prepared-statement.js';

interface Pending {
  values: unknown[][];
  resolve: (inserted: boolean[]) => void;
  reject: (reason: unknown) => void;
}

/** Rows per statement: PostgreSQL takes at most 65,535 parameters, and one name is prepared per row count up to this. */
const MAX_ROWS = 64;

/**
 * Group commit for PostgreSQL's hottest writes (an issued token, a DPoP proof's or client
 * assertion's jti): the rows that requests submit during one turn of the event loop are written by
 * one multi-row INSERT, on the next turn, in autocommit. Each caller's promise settles once that
 * statement has committed, so nothing is acknowledged before it is stored, exactly as with one
 * INSERT per request; what changes is that a busy instance pays one round trip, one statement and
 * one WAL flush for many requests instead of one each (bench/RESULTS.md, "PostgreSQL").
 *
 * A batch that fails is tried again request by request, each in its own statement, so only the
 * request whose rows are at fault fails (as GroupCommit does on SQLite). Not when the database was
 * lost (database-unavailable.ts): whether that statement committed is then unknown (a connection
 * cut between the commit and its answer, as a crashed primary does), and a row-by-row retry on a
 * new connection would find its own rows there already (a duplicate key, a 500; or, with a conflict
 * key, a false replay). Every request of the batch gets the error instead (503, and the client's
 * retry is a new request with new values). The statement is a named
 * one per row count, which node-postgres prepares once per pooled connection (unnamed through a
 * transaction pooler: statementName). With `conflictKey`, the INSERT is `ON CONFLICT DO NOTHING
 * RETURNING` that column, and each caller learns which of its rows went in (a replay check: false
 * when the key was already there, also when two requests of one batch carry the same key: the
 * first one wins).
 */
export class InsertBatch {
  private queue: Pending[] = [];
  private readonly texts = new Map<number, string>();
  /** Whether the statements are named (not through a transaction pooler: statementName). */
  private readonly named: boolean;

  constructor(
    private readonly dataSource: DataSource,
    private readonly name: string,
    private readonly table: string,
    private readonly columns: readonly string[],
    private readonly conflictKey?: string,
  ) {
    if (!(dataSource.driver instanceof PostgresDriver)) throw new Error('InsertBatch is for PostgreSQL; SQLite writes go through GroupCommit');
    this.named = namesStatements(dataSource);
  }

  /** Inserts `values` (one array per row, in the order of the columns); for each row, whether it went in. */
  insert(values: unknown[][]): Promise<boolean[]> {
    return new Promise<boolean[]>((resolve, reject) => {
      if (this.queue.length === 0) setImmediate(() => this.flush());
      this.queue.push({ values, resolve, reject });
    });
  }

  private flush(): void {
    const batch = this.queue;
    this.queue = [];
    // Requests in order, each request's rows together, at most MAX_ROWS rows a statement.
    let chunk: Pending[] = [];
    let rows = 0;
    for (const pending of batch) {
      if (rows + pending.values.length > MAX_ROWS && chunk.length > 0) {
        void this.write(chunk);
        chunk = [];
        rows = 0;
      }
      chunk.push(pending);
      rows += pending.values.length;
    }
    if (chunk.length > 0) void this.write(chunk);
  }

  private async write(chunk: Pending[]): Promise<void> {
    try {
      const inserted = await this.run(chunk.flatMap((pending) => pending.values));
      let at = 0;
      for (const pending of chunk) {
        pending.resolve(inserted.slice(at, at + pending.values.length));
        at += pending.values.length;
      }
    } catch (error) {
      if (chunk.length === 1 || isDatabaseUnavailable(error)) {
        for (const pending of chunk) pending.reject(error);
        return;
      }
      for (const pending of chunk) await this.write([pending]);
    }
  }

  /** The INSERT of `count` rows, built once per count. */
  private statement(count: number): string {
    let text = this.texts.get(count);
    if (text === undefined) {
      const tuple = `(${this.columns.map(() => '?').join(', ')})`;
      const conflict = this.conflictKey ? ` ON CONFLICT DO NOTHING RETURNING "${this.conflictKey}"` : '';
      text = placeholders(`INSERT INTO "${this.table}" (${this.columns.map((c) => `"${c}"`).join(', ')}) VALUES ${Array.from({ length: count }, () => tuple).join(', ')}${conflict}`, 'postgres');
      this.texts.set(count, text);
    }
    return text;
  }

  /** One INSERT of `rows`; for each, whether it went in. */
  private async run(rows: unknown[][]): Promise<boolean[]> {
    const result = await postgresPool(this.dataSource).query({ name: this.named ? `${this.name}_${rows.length}` : undefined, text: this.statement(rows.length), values: rows.flat() });
    if (!this.conflictKey) return rows.map(() => true);
    // A key returned once stands for the first row that carried it; any later row with the same key was a conflict.
    const keyAt = this.columns.indexOf(this.conflictKey);
    const returned = new Set(result.rows.map((row) => row[this.conflictKey!]));
    return rows.map((row) => returned.delete(row[keyAt]));
  }
}
