import { AsyncLocalStorage } from 'node:async_hooks';
import type { DataSource, EntityManager } from 'typeorm';

interface PendingWrite {
  write: (manager: EntityManager) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (reason: unknown) => void;
}

/** A unit of work broke the rules of group commit (the class comment): it awaited something other than its manager, or started another write. */
export class UnitOfWorkRuleError extends Error {
  constructor(what = 'awaited something other than the manager it was given (a timer, I/O)') {
    super(`A group-commit write ${what}; on SQLite a unit of work must not (src/database/group-commit.ts)`);
    this.name = 'UnitOfWorkRuleError';
  }
}

/** Set while a unit of work runs, so that a write it starts itself (which would wait for this very batch) is refused at once. */
const insideUnit = new AsyncLocalStorage<true>();

/**
 * Runs writes in an open transaction, refusing one that let the event loop turn. Two watches, since
 * neither phase comes first in every case: started in the check phase (flush runs from
 * setImmediate), an immediate set now runs only in the next iteration's check phase, after that
 * iteration's timers, so a unit awaiting a zero timer under load would slip past it; the zero timer
 * set here, before any the unit sets, fires first in that timers phase.
 */
async function runInOneTurn(writes: PendingWrite['write'][], manager: EntityManager): Promise<unknown[]> {
  let turned = false;
  const mark = (): void => {
    turned = true;
  };
  const watch = setImmediate(mark);
  const timerWatch = setTimeout(mark, 0);
  try {
    const out: unknown[] = [];
    for (const write of writes) {
      out.push(await insideUnit.run(true, () => write(manager)));
      if (turned) throw new UnitOfWorkRuleError();
    }
    return out;
  } finally {
    clearImmediate(watch);
    clearTimeout(timerWatch);
  }
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
 * in better-sqlite3, so it must not await anything else. This is enforced, not only written here:
 * batches are committed one after another, never nested, and better-sqlite3's work through TypeORM
 * settles in microtasks, so the event loop cannot reach its next turn while a transaction's writes
 * run unless one of them awaited something else (a timer, I/O). A flag set on the
 * next turn catches that: the write fails with UnitOfWorkRuleError and its neighbours commit
 * without it (test/integration/group-commit.spec.ts). What settles without a turn (better-sqlite3
 * work on another connection) cannot be told apart, and cannot interleave either.
 * PostgreSQL, with a connection per transaction and its own group commit, does not need this.
 */
export class GroupCommit {
  private queue: PendingWrite[] = [];
  /** The batch being committed: the next one starts only after it, so two never nest on the connection. */
  private committing: Promise<void> = Promise.resolve();

  constructor(private readonly dataSource: DataSource) {}

  run<T>(write: (manager: EntityManager) => Promise<T>): Promise<T> {
    // It would wait for the next batch, which waits for this one: a deadlock. The manager it was given is the way.
    if (insideUnit.getStore()) return Promise.reject(new UnitOfWorkRuleError('started another write instead of using the manager it was given'));
    return new Promise<T>((resolve, reject) => {
      if (this.queue.length === 0) {
        setImmediate(() => {
          this.committing = this.committing.then(() => this.flush());
        });
      }
      this.queue.push({ write, resolve: resolve as (value: unknown) => void, reject });
    });
  }

  private async flush(): Promise<void> {
    const batch = this.queue;
    this.queue = [];
    let results: unknown[];
    try {
      results = await this.dataSource.transaction((manager) => runInOneTurn(batch.map(({ write }) => write), manager));
    } catch (error) {
      if (batch.length === 1) batch[0].reject(error);
      else for (const pending of batch) await this.runAlone(pending);
      return;
    }
    batch.forEach(({ resolve }, i) => resolve(results[i]));
  }

  private async runAlone({ write, resolve, reject }: PendingWrite): Promise<void> {
    try {
      const [result] = await this.dataSource.transaction((manager) => runInOneTurn([write], manager));
      resolve(result);
    } catch (error) {
      reject(error);
    }
  }
}
