import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { readDatabaseConfig } from '../../src/config/database.config.js';
import { dateParameter } from '../../src/database/prepared-statement.js';
import { buildDataSourceOptions } from '../../src/schema/data-source.options.js';
import { SessionSearchStore, type LiveSessionFilter } from '../../src/sessions/session-search.store.js';
import { recordingLogger } from '../helpers/recording-logger.js';
import { createTestDatabase, dropTestDatabase } from '../helpers/test-database.js';

/**
 * Issue 48: the admin API's list of every live session reads an index for its common questions
 * (everyone's, one person's, one client's), on the dialect under test, instead of every session
 * kept (ended and expired ones stay 90 days, device-history.ts): the plan of the very statements
 * SessionSearchStore sends, over a few thousand sessions of a few hundred people, names the index.
 */
describe('the plans of the live sessions list', () => {
  const PEOPLE = 400;
  const SESSIONS_EACH = 10;
  const CLIENTS = 20;
  let dataSource: DataSource;
  let store: SessionSearchStore;
  const postgres = readDatabaseConfig().dialect === 'postgres';
  const now = new Date();
  const people: string[] = [];
  const clients = Array.from({ length: CLIENTS }, (_, i) => `client-${i}`);
  /** The statements the store sent, with their parameters, as TypeORM logged them. */
  const { sent, logger: recorder } = recordingLogger();

  async function insert(table: string, columns: string[], rows: unknown[][]): Promise<void> {
    for (let i = 0; i < rows.length; i += 200) {
      const chunk = rows.slice(i, i + 200);
      const tuples = chunk.map((_, j) => `(${columns.map((__, k) => (postgres ? `$${columns.length * j + k + 1}` : '?')).join(', ')})`).join(', ');
      await dataSource.query(`INSERT INTO "${table}" (${columns.map((c) => `"${c}"`).join(', ')}) VALUES ${tuples}`, chunk.flat());
    }
  }

  beforeAll(async () => {
    await createTestDatabase();
    dataSource = new DataSource({ ...buildDataSourceOptions(readDatabaseConfig()), migrationsRun: false, logging: ['query'], logger: recorder });
    await dataSource.initialize();
    await dataSource.runMigrations();
    const date = (offsetMinutes: number) => dateParameter(new Date(now.getTime() + offsetMinutes * 60_000), dataSource.options.type);
    for (let i = 0; i < PEOPLE; i++) people.push(randomUUID());
    await insert('users', ['id', 'username', 'password_hash'], people.map((id, i) => [id, `person${i}`, 'x']));
    await insert('clients', ['id', 'name', 'redirect_uris', 'grant_types', 'token_endpoint_auth_method'], clients.map((id) => [id, id, '[]', '[]', 'none']));
    // Most sessions kept are over (ended, or expired within the 90 days devices are remembered); a few are live.
    const sessions: unknown[][] = [];
    const records: unknown[][] = [];
    people.forEach((userId, p) => {
      for (let s = 0; s < SESSIONS_EACH; s++) {
        const id = randomUUID().replaceAll('-', '') + randomUUID().replaceAll('-', '');
        const age = (p * SESSIONS_EACH + s) * 7;
        const live = s % 5 === 0;
        const ended = !live && s % 2 === 0;
        sessions.push([id, userId, randomUUID(), date(-age), date(live ? 60 * 12 : ended ? -age + 5 : -age + 60 * 8), ended ? date(-age + 5) : null, `203.0.113.${s}`, s % 3 === 0 ? 'Firefox on Windows' : 'Safari on iPhone']);
        records.push([id, clients[(p + s) % CLIENTS], date(-age)]);
      }
    });
    await insert('sessions', ['id', 'user_id', 'public_id', 'created_at', 'expires_at', 'ended_at', 'ip', 'device'], sessions);
    await insert('session_clients', ['session_id', 'client_id', 'created_at'], records);
    await dataSource.query('ANALYZE');
    store = new SessionSearchStore(dataSource);
  });
  afterAll(async () => {
    if (dataSource?.isInitialized) await dataSource.destroy();
    await dropTestDatabase();
  });

  /** The plan of the statement the store sends for `filter`. */
  async function planOf(filter: LiveSessionFilter): Promise<string> {
    sent.length = 0;
    const found = await store.page(filter, now, 51, null);
    expect(found.length).toBeGreaterThan(0);
    const { query, parameters } = sent[sent.length - 1];
    const rows = (await dataSource.query(postgres ? `EXPLAIN ${query}` : `EXPLAIN QUERY PLAN ${query}`, parameters)) as Record<string, unknown>[];
    return rows.map((row) => String(postgres ? row['QUERY PLAN'] : row.detail)).join('\n');
  }

  /** Reading a whole table, in either dialect's words. */
  const readsWhole = (plan: string, table: string, alias: string) => new RegExp(`Seq Scan on ${table}\\b|^SCAN ${alias}\\b`, 'm').test(plan);

  it("everyone's: the live range of the expires_at index (ending a session pulls its expires_at back), never the whole table", async () => {
    const plan = await planOf({});
    expect(plan).toContain('IDX_9cfe37d28c3b229a350e086d94');
    expect(readsWhole(plan, 'sessions', 'session')).toBe(false);
  });

  it("one person's: the user_id index", async () => {
    const plan = await planOf({ person: people[0] });
    expect(plan).toContain('IDX_085d540d9f418cfbdc7bd55bb1');
    expect(readsWhole(plan, 'sessions', 'session')).toBe(false);
  });

  it("one client's: session_clients by its client_id index (migration SessionListIndexes1767200200000), then each session by its key", async () => {
    const plan = await planOf({ client: clients[3] });
    expect(plan).toContain('IDX_session_clients_client_id');
    expect(readsWhole(plan, 'session_clients', 'record')).toBe(false);
    expect(readsWhole(plan, 'sessions', 'session')).toBe(false);
  });
});
