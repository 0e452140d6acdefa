import { QueryFailedError } from 'typeorm';
import { isDatabaseUnavailable } from './database-unavailable.js';

function withCode(code: string, message = 'boom'): Error {
  return Object.assign(new Error(message), { code });
}

describe(isDatabaseUnavailable.name, () => {
  it.each([
    ['a refused connection', withCode('ECONNREFUSED')],
    ['a reset connection', withCode('ECONNRESET')],
    ['PostgreSQL shutting down (57P01)', withCode('57P01', 'terminating connection due to administrator command')],
    ['PostgreSQL starting up (57P03)', withCode('57P03', 'the database system is starting up')],
    ['a class 08 connection failure', withCode('08006')],
    ['too many connections (53300)', withCode('53300')],
    ['a write on a read-only primary (25006)', new QueryFailedError('INSERT', [], withCode('25006', 'cannot execute INSERT in a read-only transaction'))],
    ['a serialization failure (40001)', withCode('40001', 'could not serialize access due to concurrent update')],
    ['a deadlock (40P01)', withCode('40P01', 'deadlock detected')],
    ['PgBouncer unable to reach the server (08P01)', withCode('08P01', 'server login has been failing, try again later (server_login_retry)')],
    ['a pooled client whose connection failed', new Error('Client has encountered a connection error and is not queryable')],
    ['a busy SQLite file', withCode('SQLITE_BUSY', 'database is locked')],
    ['node-postgres losing its connection', new Error('Connection terminated unexpectedly')],
    ['node-postgres timing out on connect', new Error('timeout exceeded when trying to connect')],
    ['a TypeORM query on a lost connection', new QueryFailedError('SELECT 1', [], withCode('57P01'))],
    ['an error caused by one', new Error('wrapped', { cause: withCode('ECONNREFUSED') })],
  ])('recognises %s', (_name, error) => {
    expect(isDatabaseUnavailable(error)).toBe(true);
  });

  it.each([
    ['a unique violation (23505)', new QueryFailedError('INSERT', [], withCode('23505'))],
    ['a syntax error (42601)', withCode('42601')],
    ['a check violation (23514)', withCode('23514')],
    ['a statement in an aborted transaction (25P02)', withCode('25P02')],
    ['a constraint failure in SQLite', withCode('SQLITE_CONSTRAINT_UNIQUE')],
    ['a plain bug', new TypeError("Cannot read properties of undefined (reading 'id')")],
    ['a string', 'ECONNREFUSED'],
    ['null', null],
  ])('does not mistake %s for an outage', (_name, error) => {
    expect(isDatabaseUnavailable(error)).toBe(false);
  });
});
