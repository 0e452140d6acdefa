import { DataSource } from 'typeorm';
import { readDatabaseConfig } from '../../src/config/database.config.js';
import { buildDataSourceOptions } from '../../src/schema/data-source.options.js';
import { ENTITIES } from '../../src/schema/entities.js';
import { MIGRATIONS } from '../../src/schema/migrations/index.js';
import { createTestDatabase, dropTestDatabase } from '../helpers/test-database.js';

/**
 * The committed migrations and the entities describe the same schema, on the dialect under test:
 * after the migrations, TypeORM's schema builder finds nothing left to change (what
 * `typeorm migration:generate` would write is empty), and every migration can be undone and redone.
 */
describe('database migrations', () => {
  let dataSource: DataSource;

  const migrationNames = MIGRATIONS.map((migration) => new migration().name ?? migration.name);
  const entityTables = (): string[] => dataSource.entityMetadatas.map((metadata) => metadata.tableName).sort();

  /** The statements the schema builder would run to bring the database in line with the entities. */
  async function pendingSchemaChanges(): Promise<string[]> {
    const sql = await dataSource.driver.createSchemaBuilder().log();
    return sql.upQueries.map((query) => query.query);
  }

  async function existingTables(): Promise<string[]> {
    const runner = dataSource.createQueryRunner();
    try {
      const tables = await Promise.all(entityTables().map(async (name) => ((await runner.hasTable(name)) ? name : undefined)));
      return tables.filter((name): name is string => name !== undefined);
    } finally {
      await runner.release();
    }
  }

  /** Every column of the entity tables that exist, as "table.column": what a migration that only adds columns changes. */
  async function existingColumns(): Promise<string[]> {
    const runner = dataSource.createQueryRunner();
    try {
      const tables = await runner.getTables(await existingTables());
      return tables.flatMap((table) => table.columns.map((column) => `${table.name.replace(/^public\./, '')}.${column.name}`)).sort();
    } finally {
      await runner.release();
    }
  }

  /** The triggers on the entity tables and the functions of the schema, as "trigger:table.name" and "function:name". */
  async function existingTriggersAndFunctions(): Promise<string[]> {
    if (dataSource.options.type !== 'postgres') {
      const rows = (await dataSource.query(`SELECT "tbl_name" AS "table", "name" FROM "sqlite_master" WHERE "type" = 'trigger'`)) as { table: string; name: string }[];
      return rows.map((row) => `trigger:${row.table}.${row.name}`).sort();
    }
    const triggers = (await dataSource.query(
      `SELECT "c"."relname" AS "table", "t"."tgname" AS "name" FROM "pg_trigger" "t" JOIN "pg_class" "c" ON "c"."oid" = "t"."tgrelid" WHERE NOT "t"."tgisinternal" AND "c"."relnamespace" = current_schema()::regnamespace`,
    )) as { table: string; name: string }[];
    const functions = (await dataSource.query(`SELECT "proname" AS "name" FROM "pg_proc" WHERE "pronamespace" = current_schema()::regnamespace`)) as { name: string }[];
    return [...triggers.map((row) => `trigger:${row.table}.${row.name}`), ...functions.map((row) => `function:${row.name}`)].sort();
  }

  /** The indexes of the entity tables, as "index:name" (the expression indexes TypeORM cannot describe included). */
  async function existingIndexes(): Promise<string[]> {
    const rows = (await dataSource.query(
      dataSource.options.type === 'postgres'
        ? `SELECT "indexname" AS "name" FROM "pg_indexes" WHERE "schemaname" = current_schema()`
        : `SELECT "name" FROM "sqlite_master" WHERE "type" = 'index'`,
    )) as { name: string }[];
    return rows.map((row) => `index:${row.name}`).sort();
  }

  /** What a migration may add: columns (with their tables), indexes, triggers and functions. */
  async function schemaObjects(): Promise<string[]> {
    return [...(await existingColumns()), ...(await existingIndexes()), ...(await existingTriggersAndFunctions())];
  }

  async function appliedMigrations(): Promise<string[]> {
    const rows = (await dataSource.query('SELECT "name" FROM "migrations" ORDER BY "id"')) as { name: string }[];
    return rows.map((row) => row.name);
  }

  beforeAll(async () => {
    await createTestDatabase();
    dataSource = new DataSource({ ...buildDataSourceOptions(readDatabaseConfig()), migrationsRun: false });
    await dataSource.initialize();
  });
  afterAll(async () => {
    if (dataSource?.isInitialized) await dataSource.destroy();
    await dropTestDatabase();
  });

  it('starts from an empty database with every migration pending', async () => {
    expect(await existingTables()).toEqual([]);
    expect(await dataSource.showMigrations()).toBe(true);
    // The comparison below is live: against an empty database it wants to create every table.
    const pending = await pendingSchemaChanges();
    for (const table of entityTables()) expect(pending.some((query) => query.includes(`CREATE TABLE "${table}"`))).toBe(true);
  });

  it('applies every migration, in order', async () => {
    const applied = await dataSource.runMigrations({ transaction: 'each' });
    expect(applied.map((migration) => migration.name)).toEqual(migrationNames);
    expect(await appliedMigrations()).toEqual(migrationNames);
    expect(await dataSource.showMigrations()).toBe(false);
  });

  it('creates a table for every entity', async () => {
    expect(ENTITIES.length).toBe(dataSource.entityMetadatas.length);
    expect(await existingTables()).toEqual(entityTables());
  });

  it('leaves the schema builder nothing to change: entities and migrations agree', async () => {
    expect(await pendingSchemaChanges()).toEqual([]);
  });

  it('applies nothing when run again', async () => {
    expect(await dataSource.runMigrations({ transaction: 'each' })).toEqual([]);
  });

  it('undoes the migrations one by one, newest first, down to an empty database', async () => {
    for (let remaining = migrationNames.length - 1; remaining >= 0; remaining--) {
      await dataSource.undoLastMigration({ transaction: 'each' });
      expect(await appliedMigrations()).toEqual(migrationNames.slice(0, remaining));
    }
    expect(await existingTables()).toEqual([]);
    expect(await dataSource.showMigrations()).toBe(true);
  });

  it('undoing the newest migration removes only what it created (tables, columns, indexes, triggers or functions)', async () => {
    await dataSource.runMigrations({ transaction: 'each' });
    const before = await schemaObjects();
    await dataSource.undoLastMigration({ transaction: 'each' });
    const after = await schemaObjects();
    expect(after.length).toBeGreaterThan(0);
    expect(before).toEqual(expect.arrayContaining(after));
    // A migration for one dialect alone (the client notifications are PostgreSQL's) leaves the other unchanged.
    if (dataSource.options.type === 'postgres') expect(after.length).toBeLessThan(before.length);
    expect(await appliedMigrations()).toEqual(migrationNames.slice(0, -1));
  });

  it('re-applies the migrations after they were undone, to the same schema', async () => {
    const applied = await dataSource.runMigrations({ transaction: 'each' });
    expect(applied.map((migration) => migration.name)).toEqual(migrationNames.slice(-1));
    expect(await appliedMigrations()).toEqual(migrationNames);
    expect(await existingTables()).toEqual(entityTables());
    expect(await pendingSchemaChanges()).toEqual([]);
  });
});
