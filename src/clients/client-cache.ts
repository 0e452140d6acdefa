import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { databaseConfig, type DatabaseConfig } from '../config/database.config.js';
import { ChangeNotifications, type ChangeListener } from '../database/change-notifications.js';

/** The channel the clients table's trigger notifies (migration ClientChangeNotifications1765000000000). */
export const CLIENT_CHANGES_CHANNEL = 'latchkey_clients';
/** A notification's payload that stands for every client (TRUNCATE). */
const EVERY_CLIENT = '*';
/** Past this many clients, the cache starts again empty rather than grow without bound. */
const MAX_ENTRIES = 10_000;

type Row = Record<string, unknown>;

/**
 * PostgreSQL: client rows kept in the process, so that a token request (client authentication,
 * the grant's rules) costs no round trip for them. Every instance learns of a change at once: a
 * trigger on the clients table notifies `latchkey_clients` with the client's id when a change
 * commits, whoever made it (this app, another instance, the CLI, an administrator's SQL), and the
 * instance drops that row (ChangeNotifications: PostgreSQL LISTEN/NOTIFY).
 *
 * Never stale in a way that widens a right:
 * - Rows are kept only while notifications are seen to arrive (ChangeNotifications proves it every
 *   5 s). When they are not, the cache is emptied and every lookup reads the database; when they
 *   are again, it starts empty (one sent meanwhile may have been missed).
 * - A row read while a notification arrived is not kept (the generation counter): the read may
 *   have seen the state before that change.
 * - Each entry expires after CLIENT_CACHE_SECONDS anyway (default 60; 0 turns the cache off).
 * What remains is the delivery of a notification, well under a millisecond here: a request that
 * reaches another instance in that instant is answered as if it had come just before the change.
 * Lookups of unknown ids are not cached. Each caller decodes the row into its own entity, so no
 * caller can change another's client.
 */
@Injectable()
export class ClientCache implements OnApplicationBootstrap, OnApplicationShutdown, ChangeListener {
  private readonly entries = new Map<string, { row: Row; until: number }>();
  private readonly ttlMs: number;
  private readonly notifications: ChangeNotifications;
  /** Moves on with every notification and every change of hearing: a read that straddles one is not kept. */
  private generation = 0;

  constructor(
    @InjectDataSource() dataSource: DataSource,
    @Inject(databaseConfig.KEY) config: DatabaseConfig,
  ) {
    this.ttlMs = config.dialect === 'postgres' ? config.clientCacheSeconds * 1000 : 0;
    this.notifications = new ChangeNotifications(dataSource, CLIENT_CHANGES_CHANNEL, this);
  }

  async onApplicationBootstrap(): Promise<void> {
    if (this.ttlMs > 0) await this.notifications.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.notifications.stop();
  }

  /** The row of client `id`: from the cache while changes are heard, otherwise (and then kept) from `read`. */
  async row(id: string, read: () => Promise<Row | undefined>): Promise<Row | undefined> {
    if (!this.notifications.hearing) return read();
    const cached = this.entries.get(id);
    if (cached !== undefined && cached.until > Date.now()) return cached.row;
    const generation = this.generation;
    const row = await read();
    if (row !== undefined && this.notifications.hearing && generation === this.generation) {
      if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
      this.entries.set(id, { row, until: Date.now() + this.ttlMs });
    }
    return row;
  }

  changed(clientId: string | undefined): void {
    this.generation++;
    if (clientId === undefined || clientId === EVERY_CLIENT) this.entries.clear();
    else this.entries.delete(clientId);
  }

  hearing(): void {
    this.forget();
  }

  deaf(): void {
    this.forget();
  }

  private forget(): void {
    this.generation++;
    this.entries.clear();
  }
}
