import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource, type EntityManager } from 'typeorm';
import { GroupCommit, UnitOfWorkRuleError } from '../../src/database/group-commit.js';
import { watchTransactionStatements, type TransactionStatement } from '../helpers/transaction-statements.js';

/**
 * Group commit (src/database/group-commit.ts) on a real SQLite file in WAL mode, as Latchkey opens
 * it. It is SQLite's mechanism, so this file uses SQLite whatever database the suite runs on.
 */
describe('group commit on SQLite', () => {
  let dir: string;
  let file: string;
  let dataSource: DataSource;
  /** Another connection to the same file: what another process (the CLI, a backup) sees. */
  let other: DataSource;
  let groupCommit: GroupCommit;
  const statements: TransactionStatement[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'latchkey-group-commit-'));
    file = join(dir, 'db.sqlite');
    dataSource = new DataSource({ type: 'better-sqlite3', database: file, enableWAL: true });
    await dataSource.initialize();
    await dataSource.query('CREATE TABLE "rows" ("id" TEXT PRIMARY KEY NOT NULL)');
    // Watch the one connection's transaction statements.
    watchTransactionStatements(dataSource.createQueryRunner(), (statement) => statements.push(statement));
    groupCommit = new GroupCommit(dataSource);
    other = new DataSource({ type: 'better-sqlite3', database: file });
    await other.initialize();
  });
  beforeEach(() => {
    statements.length = 0;
  });
  afterAll(async () => {
    await other?.destroy();
    await dataSource?.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  const insert = (id: string) => async (manager: EntityManager) => {
    await manager.query('INSERT INTO "rows" ("id") VALUES (?)', [id]);
    return `stored ${id}`;
  };

  async function committedIds(): Promise<string[]> {
    const rows = (await other.query('SELECT "id" FROM "rows" ORDER BY "id"')) as { id: string }[];
    return rows.map((row) => row.id);
  }

  it('runs the writes of one turn of the event loop in one transaction, each caller getting its own result', async () => {
    const results = await Promise.all(['a1', 'a2', 'a3'].map((id) => groupCommit.run(insert(id))));
    expect(results).toEqual(['stored a1', 'stored a2', 'stored a3']);
    expect(statements).toEqual(['BEGIN', 'COMMIT']);
  });

  it('settles a write only once it is committed: another connection already sees it', async () => {
    const seen = await groupCommit.run(insert('b1')).then(() => committedIds());
    expect(seen).toContain('b1');
  });

  it('fails only the write that fails: the batch rolls back and each of its writes runs again alone', async () => {
    const outcomes = await Promise.allSettled([groupCommit.run(insert('c1')), groupCommit.run(insert('a1')), groupCommit.run(insert('c2'))]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(String((outcomes[1] as PromiseRejectedResult).reason)).toMatch(/UNIQUE constraint failed/);
    // The shared attempt, then one transaction per write; the failed one stores nothing.
    expect(statements).toEqual(['BEGIN', 'ROLLBACK', 'BEGIN', 'COMMIT', 'BEGIN', 'ROLLBACK', 'BEGIN', 'COMMIT']);
    expect(await committedIds()).toEqual(expect.arrayContaining(['c1', 'c2']));
  });

  it('undoes everything a failing write did before it threw, in the shared attempt and alone', async () => {
    const partial = async (manager: EntityManager) => {
      await manager.query('INSERT INTO "rows" ("id") VALUES (?)', ['e-partial']);
      await manager.query('INSERT INTO "rows" ("id") VALUES (?)', ['a1']);
    };
    const outcomes = await Promise.allSettled([groupCommit.run(partial), groupCommit.run(insert('e1'))]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['rejected', 'fulfilled']);
    const ids = await committedIds();
    expect(ids).toContain('e1');
    expect(ids).not.toContain('e-partial');
  });

  it('starts a new batch on the next turn: writes submitted later do not wait for or share an earlier failure', async () => {
    const failing = groupCommit.run(insert('a1'));
    await new Promise((resolve) => setImmediate(resolve));
    const later = groupCommit.run(insert('d1'));
    await expect(failing).rejects.toThrow(/UNIQUE constraint failed/);
    await expect(later).resolves.toBe('stored d1');
    expect(await committedIds()).toContain('d1');
    expect(statements).toEqual(['BEGIN', 'ROLLBACK', 'BEGIN', 'COMMIT']);
  });

  describe('a unit of work that awaits something other than its manager', () => {
    const awaiting = (id: string, pause: () => Promise<unknown>) => async (manager: EntityManager) => {
      await manager.query('INSERT INTO "rows" ("id") VALUES (?)', [id]);
      await pause();
      return `stored ${id}`;
    };

    it.each([
      ['a timer', () => new Promise((resolve) => setTimeout(resolve, 5))],
      ['a zero timer', () => new Promise((resolve) => setTimeout(resolve, 0))],
      ['the next turn of the event loop', () => new Promise((resolve) => setImmediate(resolve))],
    ])('fails alone when it awaits %s: nothing it wrote is kept, its neighbours commit', async (_name, pause) => {
      const id = `w-${Math.random().toString(36).slice(2)}`;
      const outcomes = await Promise.allSettled([groupCommit.run(insert(`${id}-1`)), groupCommit.run(awaiting(`${id}-x`, pause)), groupCommit.run(insert(`${id}-2`))]);
      expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      expect((outcomes[1] as PromiseRejectedResult).reason).toBeInstanceOf(UnitOfWorkRuleError);
      expect((await committedIds()).filter((stored) => stored.startsWith(id))).toEqual([`${id}-1`, `${id}-2`]);
      expect(statements.filter((statement) => statement === 'SAVEPOINT')).toEqual([]);
    });

    it('fails, instead of waiting for itself forever, when it starts another write rather than using its manager', async () => {
      const nested = async (manager: EntityManager) => {
        await manager.query('INSERT INTO "rows" ("id") VALUES (?)', ['n-outer']);
        return groupCommit.run(insert('n-inner'));
      };
      const outcomes = await Promise.allSettled([groupCommit.run(nested), groupCommit.run(insert('n-neighbour'))]);
      expect(outcomes.map((outcome) => outcome.status)).toEqual(['rejected', 'fulfilled']);
      expect((outcomes[0] as PromiseRejectedResult).reason).toBeInstanceOf(UnitOfWorkRuleError);
      expect((await committedIds()).filter((id) => id.startsWith('n-'))).toEqual(['n-neighbour']);
    });

    it('is not confused with one that awaits only its manager, however many statements', async () => {
      const many = async (manager: EntityManager) => {
        for (let i = 0; i < 50; i++) await manager.query('INSERT INTO "rows" ("id") VALUES (?)', [`m-${i}`]);
        return (await manager.query('SELECT COUNT(*) AS n FROM "rows" WHERE "id" LIKE \'m-%\'')) as unknown;
      };
      await expect(groupCommit.run(many)).resolves.toEqual([{ n: 50 }]);
    });
  });
});
