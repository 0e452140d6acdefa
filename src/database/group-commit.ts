import type { DataSource, EntityManager } from 'typeorm';

interface PendingWrite {
  write: (manager: EntityManager) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (reason: unknown) => void;
}

/**
 * Group commit for SQLite: the writes submitted during one turn of the event loop run in one
 * transaction, started on the next turn (setImmediate), and each caller's promise settles only
 * once that transaction has committed, so nothing is acknowledged before it is stored.
 *
 * Why: each commit appends every page the write touched to the WAL, and every 1,000 pages a
 * checkpoint copies them back with an fsync. A token row touches 7 B-trees (the table, its key,
 * five indexes), so most of a lone INSERT's cost is its commit; in a shared transaction rows share
 * pages and checkpoints (bench/RESULTS.md: client_credentials +55–65%).
 *
 * A batch commits or fails as a whole: a write that throws fails every write of its batch (the
 * transaction rolls back, nothing is half-written), which is also what a database error does to
 * them. Transactions never interleave on SQLite's one connection: the batch's statements run
 * synchronously in better-sqlite3 (test/e2e/concurrency.e2e-spec.ts checks it). PostgreSQL, with a
 * connection per transaction and its own group commit, does not need this.
 */
export class GroupCommit {
  private queue: PendingWrite[] = [];

  constructor(private readonly dataSource: DataSource) {}

  run<T>(write: (manager: EntityManager) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.queue.length === 0) setImmediate(() => void this.flush());
      this.queue.push({ write, resolve: resolve as (value: unknown) => void, reject });
    });
  }

  private async flush(): Promise<void> {
    const batch = this.queue;
    this.queue = [];
    let results: unknown[];
    try {
      results = await this.dataSource.transaction(async (manager) => {
        const out: unknown[] = [];
        for (const { write } of batch) out.push(await write(manager));
        return out;
      });
    } catch (error) {
      for (const { reject } of batch) reject(error);
      return;
    }
    batch.forEach(({ resolve }, i) => resolve(results[i]));
  }
}
