import type { QueryRunner } from 'typeorm';

export type TransactionStatement = 'BEGIN' | 'COMMIT' | 'ROLLBACK' | 'SAVEPOINT';

/**
 * Reports each transaction statement a query runner (one connection) executes, then runs it as
 * usual: BEGIN (SQLite) and START TRANSACTION (PostgreSQL) as BEGIN, COMMIT, ROLLBACK, and any
 * statement naming a SAVEPOINT (a transaction nested in another).
 */
export function watchTransactionStatements(runner: QueryRunner, report: (statement: TransactionStatement) => void): void {
  const query = runner.query.bind(runner);
  runner.query = ((sql: string, ...rest: unknown[]) => {
    const statement = transactionStatement(sql);
    if (statement) report(statement);
    return (query as (...args: unknown[]) => unknown)(sql, ...rest);
  }) as QueryRunner['query'];
}

function transactionStatement(sql: string): TransactionStatement | undefined {
  if (sql.includes('SAVEPOINT')) return 'SAVEPOINT';
  if (/^(BEGIN|START TRANSACTION)/.test(sql)) return 'BEGIN';
  if (sql.startsWith('COMMIT')) return 'COMMIT';
  if (sql.startsWith('ROLLBACK')) return 'ROLLBACK';
  return undefined;
}
