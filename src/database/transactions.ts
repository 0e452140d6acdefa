import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import { GroupCommit } from './group-commit.js';

/**
 * Where the token endpoint's transactions run: on SQLite in the shared group commit of this turn
 * of the event loop (src/database/group-commit.ts), on PostgreSQL in a transaction of their own
 * on a pooled connection.
 *
 * The rules a unit of work follows either way: every read and write goes through the manager it
 * is given; it does not await anything but that manager (no timers, no network), so SQLite's one
 * connection never interleaves two transactions; and it returns its outcome instead of throwing
 * for an expected refusal, because a throw rolls back the batch and makes its neighbours run again.
 */
@Injectable()
export class Transactions {
  private readonly groupCommit?: GroupCommit;

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {
    if (dataSource.options.type !== 'postgres') this.groupCommit = new GroupCommit(dataSource);
  }

  /** Runs `work` atomically. */
  run<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.groupCommit ? this.groupCommit.run(work) : this.dataSource.transaction(work);
  }

  /**
   * Runs one statement that needs no transaction of its own: in the group commit on SQLite, and
   * on PostgreSQL as it is (autocommit), which saves the BEGIN and COMMIT round trips.
   */
  write<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.groupCommit ? this.groupCommit.run(work) : work(this.dataSource.manager);
  }
}

/**
 * Work that must commit with a write, in the write's own transaction, after it: it may only use
 * `manager`, and it undoes the write by throwing (an Idempotency-Key's kept answer, which must
 * exist exactly when the write does: IdempotentWrites).
 */
export type CommitsWith<T> = (manager: EntityManager, result: T) => Promise<void>;
