import type { DataSource, EntityManager, EntitySubscriberInterface, QueryRunner } from 'typeorm';

/** What runs once each open transaction ends, by the query runner that holds it. */
const pending = new WeakMap<QueryRunner, (() => void)[]>();
/** The data sources whose transactions are watched (one subscriber each, added on first use). */
const watched = new WeakSet<DataSource>();

/** TypeORM tells its subscribers when a transaction ends, whoever opened it (Transactions, the group commit, dataSource.transaction). */
const transactionEnds: EntitySubscriberInterface = {
  afterTransactionCommit: ({ queryRunner }) => ended(queryRunner),
  // Run after a rollback too: whether a failed COMMIT committed cannot always be told, and the
  // actions only forget (a read more), which is never wrong.
  afterTransactionRollback: ({ queryRunner }) => ended(queryRunner),
};

function ended(queryRunner: QueryRunner): void {
  // A savepoint released or rolled back: the transaction goes on.
  if (queryRunner.isTransactionActive) return;
  const actions = pending.get(queryRunner);
  pending.delete(queryRunner);
  for (const action of actions ?? []) action();
}

/**
 * Runs `action` once what was written through `manager` has committed: when its transaction ends,
 * before the code that committed it goes on, or at once when `manager` runs no transaction (each
 * statement committed on its own, so call this after the statement). For what an instance keeps of
 * a row it has just changed, which must go the moment the change is in the database, not before
 * (a read in between would keep the old row again) and not later.
 */
export function afterCommit(manager: EntityManager, action: () => void): void {
  const queryRunner = manager.queryRunner;
  if (queryRunner === undefined || !queryRunner.isTransactionActive) return action();
  const dataSource = manager.connection;
  if (!watched.has(dataSource)) {
    watched.add(dataSource);
    dataSource.subscribers.push(transactionEnds);
  }
  pending.set(queryRunner, [...(pending.get(queryRunner) ?? []), action]);
}
