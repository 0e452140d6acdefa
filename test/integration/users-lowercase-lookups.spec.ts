import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { readDatabaseConfig } from '../../src/config/database.config.js';
import { buildDataSourceOptions } from '../../src/schema/data-source.options.js';
import type { ChangeNotifications } from '../../src/database/change-notifications.js';
import type { Transactions } from '../../src/database/transactions.js';
import { UserStore } from '../../src/users/user.store.js';
import { recordingLogger } from '../helpers/recording-logger.js';
import { createTestDatabase, dropTestDatabase } from '../helpers/test-database.js';

/**
 * Issue 47: the lookups that ignore case (SCIM's userName, RFC 7643 §4.1.1; a forgotten password
 * by address) use the expression indexes of migration UsersLowercaseIndexes1766900100000 on the
 * dialect under test, instead of reading every person: the plan of the very statements UserStore
 * sends, over a few thousand people, names the index.
 */
describe('case-insensitive lookups of people', () => {
  const PEOPLE = 3000;
  let dataSource: DataSource;
  let store: UserStore;
  const postgres = readDatabaseConfig().dialect === 'postgres';
  /** The statements UserStore sent, with their parameters, as TypeORM logged them. */
  const { sent, logger: recorder } = recordingLogger();

  beforeAll(async () => {
    await createTestDatabase();
    dataSource = new DataSource({ ...buildDataSourceOptions(readDatabaseConfig()), migrationsRun: false, logging: ['query'], logger: recorder });
    await dataSource.initialize();
    await dataSource.runMigrations();
    const rows = Array.from({ length: PEOPLE }, (_, i) => [randomUUID(), `Person${i}`, 'x', `Person${i}@Example.com`]);
    for (let i = 0; i < rows.length; i += 500) {
      const chunk = rows.slice(i, i + 500);
      const tuples = chunk.map((_, j) => (postgres ? `($${4 * j + 1}, $${4 * j + 2}, $${4 * j + 3}, $${4 * j + 4})` : '(?, ?, ?, ?)')).join(', ');
      await dataSource.query(`INSERT INTO "users" ("id", "username", "password_hash", "email") VALUES ${tuples}`, chunk.flat());
    }
    await dataSource.query('ANALYZE');
    // Only the tables' columns this store reads: the notifications and transactions are for writes.
    store = new UserStore(dataSource, undefined as unknown as Transactions, undefined as unknown as ChangeNotifications);
  });
  afterAll(async () => {
    if (dataSource?.isInitialized) await dataSource.destroy();
    await dropTestDatabase();
  });

  /** The plan of the last statement the store sent. */
  async function planOfLast(): Promise<string> {
    const { query, parameters } = sent[sent.length - 1];
    const rows = (await dataSource.query(postgres ? `EXPLAIN ${query}` : `EXPLAIN QUERY PLAN ${query}`, parameters)) as Record<string, unknown>[];
    return rows.map((row) => String(postgres ? row['QUERY PLAN'] : row.detail)).join('\n');
  }

  it('finds a person by username whatever its case, through IDX_users_lower_username', async () => {
    sent.length = 0;
    expect((await store.findByUsernameIgnoringCase('PERSON1234'))?.username).toBe('Person1234');
    expect(await planOfLast()).toContain('IDX_users_lower_username');
  });

  it('finds the people with an address whatever its case, through IDX_users_lower_email', async () => {
    sent.length = 0;
    expect((await store.findByEmail('person42@EXAMPLE.COM')).map((user) => user.username)).toEqual(['Person42']);
    expect(await planOfLast()).toContain('IDX_users_lower_email');
  });
});
