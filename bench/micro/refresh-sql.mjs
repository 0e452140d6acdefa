/**
 * The SQL of one refresh-token rotation on SQLite, without the server: SELECT the token by hash,
 * the conditional UPDATE that consumes it, the two-row INSERT of the new pair, in transactions of
 * BATCH rotations (the group commit's batches), on the schema the migrations create. Prints the
 * µs per rotation spent in each statement, for random (v4) and time-ordered (v7) ids, and with
 * SQLite's default checkpoint interval and a 10,000-page one.
 *
 *   npm run build && node bench/micro/refresh-sql.mjs [ROTATIONS=40000] [BATCH=8]
 *
 * bench/RESULTS.md quotes it. Times are per machine: compare the rows of one run.
 */
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { v7 as uuidv7 } from 'uuid';

const rotations = Number(process.argv[2] ?? 40000);
const batch = Number(process.argv[3] ?? 8);
const dir = mkdtempSync(join(tmpdir(), 'latchkey-micro-'));
const template = join(dir, 'template.sqlite');

// The real schema: the CLI runs the migrations, and registers the client the tokens belong to.
execFileSync(process.execPath, ['dist/src/cli/main.js', 'clients:create', '--name', 'micro', '--grant-type', 'client_credentials'], {
  env: { PATH: process.env.PATH, DATABASE_URL: `sqlite:${template}` },
  stdio: 'ignore',
});

function run({ ids, checkpointPages }) {
  const file = join(dir, `run-${ids}-${checkpointPages}.sqlite`);
  copyFileSync(template, file);
  const db = new Database(file);
  // As src/schema/data-source.options.ts opens it.
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  db.pragma(`wal_autocheckpoint = ${checkpointPages}`);
  const newId = ids === 'v7' ? uuidv7 : randomUUID;
  const client = db.prepare('SELECT "id" FROM "clients"').get().id;
  const columns = '"id", "kind", "token_hash", "family_id", "client_id", "user_id", "scope", "expires_at", "consumed_at", "revoked_at", "created_at", "token_type", "mac_key"';
  const row = '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)';
  const insert = db.prepare(`INSERT INTO "tokens" (${columns}) VALUES ${row}, ${row}`);
  const consume = db.prepare('UPDATE "tokens" SET "consumed_at" = ? WHERE "id" = ? AND "kind" = ? AND "consumed_at" IS NULL AND "revoked_at" IS NULL');
  const select = db.prepare('SELECT * FROM "tokens" WHERE "token_hash" = ?');
  const begin = db.prepare('BEGIN');
  const commit = db.prepare('COMMIT');
  const hash = () => createHash('sha256').update(randomBytes(32)).digest('hex');
  const token = (kind, family) => [newId(), kind, hash(), family, client, null, 'notes:read', '2030-01-01 00:00:00.000', null, null, '2026-01-01 00:00:00.000', 'bearer', null];

  const spent = { select: 0n, update: 0n, insert: 0n, commit: 0n };
  const timed = (name, work) => {
    const start = process.hrtime.bigint();
    work();
    spent[name] += process.hrtime.bigint() - start;
  };
  // 16 clients rotating their own token family each, as the benchmark's 16 workers do.
  const families = Array.from({ length: 16 }, () => ({ family: newId(), id: undefined, hash: undefined }));
  const started = process.hrtime.bigint();
  for (let i = 0; i < rotations; i++) {
    if (i % batch === 0) begin.run();
    const previous = families[i % families.length];
    const access = token('access', previous.family);
    const refresh = token('refresh', previous.family);
    if (previous.id !== undefined) {
      timed('select', () => select.get(previous.hash));
      timed('update', () => consume.run('2026-01-01 00:00:00.000', previous.id, 'refresh'));
    }
    timed('insert', () => insert.run(...access, ...refresh));
    previous.id = refresh[0];
    previous.hash = refresh[2];
    if (i % batch === batch - 1) timed('commit', () => commit.run());
  }
  const total = process.hrtime.bigint() - started;
  db.close();
  const us = (ns) => (Number(ns) / rotations / 1000).toFixed(0).padStart(5);
  console.log(`ids ${ids}, wal_autocheckpoint ${String(checkpointPages).padStart(5)}: ${us(total)} µs per rotation (select ${us(spent.select)}, update ${us(spent.update)}, insert ${us(spent.insert)}, commit ${us(spent.commit)})`);
}

console.log(`${rotations} rotations in transactions of ${batch}, on SQLite ${new Database(':memory:').prepare('SELECT sqlite_version() AS v').get().v}`);
try {
  for (const ids of ['v4', 'v7']) for (const checkpointPages of [1000, 10000]) run({ ids, checkpointPages });
} finally {
  rmSync(dir, { recursive: true, force: true });
}
