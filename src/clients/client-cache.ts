import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { DataSource } from 'typeorm';
import { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver.js';
import { databaseConfig, type DatabaseConfig } from '../config/database.config.js';
import { postgresPool } from '../database/prepared-statement.js';

/** The channel the clients table's trigger notifies (migration ClientChangeNotifications1765000000000). */
export const CLIENT_CHANGES_CHANNEL = 'latchkey_clients';
/** The listening connection's application_name, as pg_stat_activity shows it. */
export const LISTENER_NAME = 'latchkey client changes';
/** A notification's payload that stands for every client (TRUNCATE). */
const EVERY_CLIENT = '*';
/** Past this many clients, the cache starts again empty rather than grow without bound. */
const MAX_ENTRIES = 10_000;
/** How long to wait before listening again after the listening connection was lost. */
const RELISTEN_MS = 1_000;
/** The channel of the heartbeats that prove notifications reach the instance. */
const HEARTBEAT_CHANNEL = 'latchkey_client_cache_heartbeat';
/**
 * How often notifications are proven to arrive, and how long one may take: a connection that died
 * without a word (a firewall dropping an idle one) or a pooler that does not deliver them would
 * otherwise miss changes until the entries expire.
 */
const HEARTBEAT_MS = 5_000;
const HEARTBEAT_TIMEOUT_MS = 2_000;

type Row = Record<string, unknown>;

/**
 * PostgreSQL: client rows kept in the process, so that a token request (client authentication,
 * the grant's rules) costs no round trip for them. Every instance learns of a change at once: a
 * trigger on the clients table notifies `latchkey_clients` with the client's id when a change
 * commits, whoever made it (this app, another instance, the CLI, an administrator's SQL), and the
 * instance drops that row (PostgreSQL LISTEN/NOTIFY).
 *
 * Never stale in a way that widens a right:
 * - Rows are cached only while notifications are seen to arrive: every 5 s the instance sends one
 *   through its pool and must hear it on its listening connection within 2 s. When it does not,
 *   or the connection drops, the cache is emptied and every lookup reads the database until
 *   notifications arrive again (one sent meanwhile may be lost, so the cache starts empty then).
 * - A row read while a notification arrived is not kept (the generation counter): the read may
 *   have seen the state before that change.
 * - Each entry expires after CLIENT_CACHE_SECONDS anyway (default 60; 0 turns the cache off).
 * What remains is the delivery of a notification, well under a millisecond here: a request that
 * reaches another instance in that instant is answered as if it had come just before the change.
 * Lookups of unknown ids are not cached. Each caller decodes the row into its own entity, so no
 * caller can change another's client.
 */
@Injectable()
export class ClientCache implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(ClientCache.name);
  private readonly entries = new Map<string, { row: Row; until: number }>();
  private readonly ttlMs: number;
  private listener?: pg.Client;
  private listening = false;
  /** Moves on with every notification and every loss of the listener: a read that straddles one is not kept. */
  private generation = 0;
  private stopped = false;
  private relisten?: NodeJS.Timeout;
  private heartbeat?: NodeJS.Timeout;
  /** The heartbeat sent and not yet heard. */
  private awaited?: { token: string; timer: NodeJS.Timeout };

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(databaseConfig.KEY) config: DatabaseConfig,
  ) {
    this.ttlMs = config.dialect === 'postgres' ? config.clientCacheSeconds * 1000 : 0;
  }

  async onApplicationBootstrap(): Promise<void> {
    if (this.ttlMs > 0) await this.listen();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.relisten);
    clearInterval(this.heartbeat);
    clearTimeout(this.awaited?.timer);
    this.forget();
    await this.listener?.end().catch(() => undefined);
  }

  /** The row of client `id`: from the cache while it is listening, otherwise (and then kept) from `read`. */
  async row(id: string, read: () => Promise<Row | undefined>): Promise<Row | undefined> {
    if (!this.listening) return read();
    const cached = this.entries.get(id);
    if (cached !== undefined && cached.until > Date.now()) return cached.row;
    const generation = this.generation;
    const row = await read();
    if (row !== undefined && this.listening && generation === this.generation) {
      if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
      this.entries.set(id, { row, until: Date.now() + this.ttlMs });
    }
    return row;
  }

  private async listen(): Promise<void> {
    const driver = this.dataSource.driver;
    if (!(driver instanceof PostgresDriver) || !driver.master) return;
    // The pool's own connection settings (URL, TLS, timeouts), for one connection of its own.
    const client = new pg.Client({ ...(driver.master as pg.Pool).options, keepAlive: true, query_timeout: HEARTBEAT_TIMEOUT_MS, application_name: LISTENER_NAME });
    this.listener = client;
    client.on('notification', ({ channel, payload }) => (channel === HEARTBEAT_CHANNEL ? this.heard(client, payload) : this.changed(payload)));
    client.on('error', () => this.lost(client));
    client.on('end', () => this.lost(client));
    try {
      await client.connect();
      await client.query(`LISTEN ${CLIENT_CHANGES_CHANNEL}; LISTEN ${HEARTBEAT_CHANNEL}`);
    } catch (error) {
      this.logger.warn(`Client changes are not heard (${error instanceof Error ? error.message : String(error)}); clients are read from the database until they are`);
      this.lost(client);
      return;
    }
    if (this.listener !== client) return;
    // Caching starts with the first heartbeat heard, not with LISTEN's answer: through a pooler in
    // transaction mode (PgBouncer) LISTEN succeeds and nothing is ever delivered.
    this.beat(client);
    this.heartbeat = setInterval(() => this.beat(client), HEARTBEAT_MS).unref();
  }

  /**
   * Proves that notifications reach this instance: one is sent through the pool, as a change
   * would be, and must come back on the listening connection within HEARTBEAT_TIMEOUT_MS.
   */
  private beat(client: pg.Client): void {
    if (this.awaited !== undefined) return this.lost(client);
    const token = randomBytes(12).toString('base64url');
    this.awaited = { token, timer: setTimeout(() => this.lost(client), HEARTBEAT_TIMEOUT_MS).unref() };
    postgresPool(this.dataSource)
      .query({ name: 'latchkey_client_cache_heartbeat', text: `SELECT pg_notify('${HEARTBEAT_CHANNEL}', $1)`, values: [token] })
      .catch(() => this.lost(client));
  }

  private heard(client: pg.Client, token: string | undefined): void {
    const awaited = this.awaited;
    if (this.listener !== client || awaited === undefined || awaited.token !== token) return;
    clearTimeout(awaited.timer);
    this.awaited = undefined;
    if (this.listening) return;
    // A change may have been missed before this: start empty.
    this.forget();
    this.listening = true;
  }

  private changed(clientId: string | undefined): void {
    this.generation++;
    if (clientId === undefined || clientId === EVERY_CLIENT) this.entries.clear();
    else this.entries.delete(clientId);
  }

  private lost(client: pg.Client): void {
    if (this.listener !== client) return;
    this.listener = undefined;
    this.listening = false;
    clearInterval(this.heartbeat);
    clearTimeout(this.awaited?.timer);
    this.awaited = undefined;
    this.forget();
    client.end().catch(() => undefined);
    if (!this.stopped) this.relisten = setTimeout(() => void this.listen(), RELISTEN_MS).unref();
  }

  private forget(): void {
    this.generation++;
    this.entries.clear();
  }
}
