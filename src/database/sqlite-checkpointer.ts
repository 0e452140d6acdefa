import { Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { DataSource } from 'typeorm';
import type { CheckpointReport, CheckpointWorkerData, Ready } from './sqlite-checkpoint.worker.js';

/** How often the worker copies the WAL back into the database file. */
const CHECKPOINT_INTERVAL_MS = 250;
/** The worker's entry file, next to this one: .js in dist/, .ts under Jest (Node strips the types). */
const WORKER_FILE = new URL(`./sqlite-checkpoint.worker${extname(fileURLToPath(import.meta.url))}`, import.meta.url);
/** SQLite's own default, restored on the server's connection if the worker ever stops. */
const DEFAULT_AUTOCHECKPOINT_PAGES = 1000;

export type { CheckpointReport };

/**
 * SQLite checkpoints in a worker thread instead of on the event loop.
 *
 * In WAL mode every commit appends pages to the WAL, and a checkpoint copies them back into the
 * database file and fsyncs it. SQLite runs one automatically inside the commit that passes 1,000
 * pages, and better-sqlite3 runs commits on the event loop, so every request in flight waited for
 * that copy and that fsync. Here the server's connection does no automatic checkpoints
 * (wal_autocheckpoint=0) and a worker thread with its own connection checkpoints every 250 ms.
 * The WAL then holds a quarter of a second of writes, and the fsync waits off the event loop
 * (bench/RESULTS.md). Should the worker stop, the server's connection checkpoints by itself again.
 *
 * Only for a database file: an in-memory database has no WAL, and PostgreSQL checkpoints by itself.
 */
@Injectable()
export class SqliteCheckpointer implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(SqliteCheckpointer.name);
  private worker?: Worker;
  private stopping = false;
  private lastReport?: CheckpointReport;

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** The last checkpoint the worker reported; undefined before the first, or when no worker runs. */
  get last(): CheckpointReport | undefined {
    return this.lastReport;
  }

  /** Whether a worker is checkpointing this database. */
  get running(): boolean {
    return this.worker !== undefined;
  }

  async onApplicationBootstrap(): Promise<void> {
    const file = this.databaseFile();
    if (file === undefined) return;
    await this.start(file);
  }

  /** Starts the worker on `file`; resolves once it has opened the database, or has failed to. */
  async start(file: string): Promise<void> {
    const workerData: CheckpointWorkerData = { file, intervalMs: CHECKPOINT_INTERVAL_MS };
    const worker = new Worker(WORKER_FILE, { workerData });
    // A background thread must not keep a process alive that is otherwise done (the CLI, tests).
    worker.unref();
    const ready = new Promise<boolean>((resolve) => {
      worker.once('message', (message) => resolve(message === ('ready' satisfies Ready)));
      worker.once('error', () => resolve(false));
    });
    worker.on('message', (message: CheckpointReport | Ready) => {
      if (message !== 'ready') this.lastReport = message;
    });
    worker.on('error', (error) => this.logger.error(`The SQLite checkpoint worker failed: ${error.message}`));
    worker.on('exit', () => void this.workerStopped());
    if (!(await ready)) return;
    this.worker = worker;
    await this.dataSource.query('PRAGMA wal_autocheckpoint = 0');
  }

  async onModuleDestroy(): Promise<void> {
    this.stopping = true;
    const worker = this.worker;
    this.worker = undefined;
    await worker?.terminate();
  }

  /** The worker is gone: the server's own connection checkpoints again, as SQLite does by default. */
  private async workerStopped(): Promise<void> {
    const wasRunning = this.worker !== undefined;
    this.worker = undefined;
    if (this.stopping || !this.dataSource.isInitialized) return;
    if (wasRunning) this.logger.warn('The SQLite checkpoint worker stopped; checkpoints run on the main thread again');
    await this.dataSource.query(`PRAGMA wal_autocheckpoint = ${DEFAULT_AUTOCHECKPOINT_PAGES}`).catch(() => undefined);
  }

  private databaseFile(): string | undefined {
    const options = this.dataSource.options;
    if (options.type !== 'better-sqlite3') return undefined;
    const file = options.database;
    return typeof file === 'string' && file !== '' && file !== ':memory:' ? file : undefined;
  }
}
