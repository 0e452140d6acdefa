/**
 * The SQLite checkpoint worker's thread (started by SqliteCheckpointer, sqlite-checkpointer.ts):
 * its own connection to the server's database file, and a PASSIVE checkpoint on a timer. PASSIVE
 * never waits for or blocks the server's writers and readers.
 *
 * A worker thread's entry file: it runs from dist/ as JavaScript, and under Jest from src/ as
 * TypeScript through Node's type stripping, so it keeps to erasable type syntax and imports no
 * project module. The server imports its types only, never its code.
 */
import Database from 'better-sqlite3';
import { parentPort, workerData } from 'node:worker_threads';

/** What the worker is started with. */
export interface CheckpointWorkerData {
  file: string;
  intervalMs: number;
}

/** What the worker reports after a checkpoint that moved something: SQLite's wal_checkpoint result. */
export interface CheckpointReport {
  busy: number;
  log: number;
  checkpointed: number;
}

/** Sent once the database is open, before the first checkpoint. */
export type Ready = 'ready';

// The server imports this file's types only, so this runs in the worker thread alone.
if (parentPort) {
  const port = parentPort;
  const { file, intervalMs } = workerData as CheckpointWorkerData;
  const db = new Database(file, { timeout: 5000 });
  db.pragma('synchronous = NORMAL');
  let last = '';
  setInterval(() => {
    const [result] = db.pragma('wal_checkpoint(PASSIVE)') as CheckpointReport[];
    // Report only what changed: an idle server's WAL keeps its frames, and its main thread sleeps.
    const report = JSON.stringify(result);
    if (result.log > 0 && report !== last) port.postMessage(result);
    last = report;
  }, intervalMs);
  port.postMessage('ready' satisfies Ready);
}
