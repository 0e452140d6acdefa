/** How TypeORM's SQLite query runners begin a transaction (AbstractSqliteQueryRunner.startTransaction): deferred. */
const TYPEORM_BEGIN = 'BEGIN TRANSACTION';
/** The same transaction, begun as a writer. */
const BEGIN_IMMEDIATE = 'BEGIN IMMEDIATE TRANSACTION';

/** The part of a better-sqlite3 connection this needs. */
interface SqliteConnection {
  prepare(source: string): unknown;
}

/**
 * Makes every transaction TypeORM begins on this SQLite connection begin IMMEDIATE, that is as a
 * writer: GroupCommit's batches (the server's writes and the CLI's alike, through Transactions),
 * TypeORM's own save()/remove() transactions and migrations all start with the one statement
 * rewritten here. Nested transactions are savepoints inside it and need nothing more.
 *
 * Why: a deferred BEGIN takes no lock; the transaction reads first (a SELECT before the INSERT)
 * and asks for the write lock at its first write. In WAL mode, if another connection (the CLI
 * while the server runs, or the server while the CLI runs) committed in between, the reader's
 * snapshot is stale and cannot become a write transaction: SQLite answers SQLITE_BUSY_SNAPSHOT
 * ("database is locked") at once, without calling the busy handler, since waiting could not help
 * (sqlite.org, lang_transaction.html "Read transactions", rescode.html#busy_snapshot). BEGIN
 * IMMEDIATE asks for the write lock first and waits for it up to the busy timeout (the `timeout`
 * of the data source options); what the transaction then reads no other writer can outdate.
 *
 * It costs the server nothing: its transactions all write, and they already run one at a time on
 * its one connection (GroupCommit). Issue 43; test/e2e/sqlite-concurrent-cli.e2e-spec.ts.
 */
export function beginTransactionsAsWriters(connection: SqliteConnection): void {
  const prepare = connection.prepare.bind(connection);
  // TypeORM prepares (and caches) each statement through this method, BEGIN included.
  connection.prepare = (source: string) => prepare(source === TYPEORM_BEGIN ? BEGIN_IMMEDIATE : source);
}
