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
 * pages and checkpoints (bench/RESULTS.md).
 *
 * A write that throws must not take its neighbours down with it: the batch rolls back (nothing is
 * half-written) and each of its writes then runs again alone, in its own transaction, so only the
 * failing one fails. A write may therefore run twice; it must do all of its work through the
 * manager it is given (which the rollback undoes) and return its result rather than publish it.
 *
 * Transactions never interleave on SQLite's one connection: a write's statements run synchronously
 * in better-sqlite3 and it must not await anything else (test/e2e/concurrency.e2e-spec.ts checks
 * it). PostgreSQL, with a connection per transaction and its own group commit, does not need this.
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
      if (batch.length === 1) batch[0].reject(error);
      else for (const pending of batch) await this.runAlone(pending);
      return;
    }
    batch.forEach(({ resolve }, i) => resolve(results[i]));
  }

  private async runAlone({ write, resolve, reject }: PendingWrite): Promise<void> {
    try {
      resolve(await this.dataSource.transaction(write));
    } catch (error) {
      reject(error);
    }
  }
}
