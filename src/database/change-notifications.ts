import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { DataSource, EntityManager } from 'typeorm';
import { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver.js';
import { databaseConfig, type DatabaseConfig } from '../config/database.config.js';
import { afterCommit } from './after-commit.js';
import { postgresPool, statementName } from './prepared-statement.js';

/** The channel of the heartbeats that prove notifications reach the instance. */
const HEARTBEAT_CHANNEL = 'latchkey_heartbeat';
/**
 * How often delivery is proven, and how long a heartbeat may take: a connection that died without
 * a word (a firewall dropping an idle one), or a pooler that does not deliver notifications, would
 * otherwise go unnoticed.
 */
const HEARTBEAT_MS = 5_000;
const HEARTBEAT_TIMEOUT_MS = 2_000;
/** How long to wait before listening again after the listening connection was lost. */
const RELISTEN_MS = 1_000;
/** The listening connection's application_name, as pg_stat_activity shows it. */
export const LISTENER_NAME = 'latchkey notifications';

/** What a listener is told. */
export interface ChangeListener {
  /** A notification on the channel, with its payload. */
  changed(payload: string | undefined): void;
  /** Delivery is proven again (and was not before): notifications may have been missed meanwhile. */
  hearing(): void;
  /** Delivery is no longer proven: notifications may be missed from now on. */
  deaf(): void;
}

/**
 * PostgreSQL LISTEN on the channels that stores subscribe to, on one connection of its own, with
 * delivery proven rather than assumed: every 5 s a heartbeat is sent through the pool (as any
 * writer's NOTIFY would be) and must come back on the listening connection within 2 s. Until the
 * first one has, and after a loss, a failed heartbeat or a dropped connection, `hearing` is false
 * and every subscriber is told. A pooler in transaction mode (PgBouncer) answers LISTEN and
 * delivers nothing: that is caught too, and with DATABASE_POOL_MODE=transaction nothing listens
 * through it at all (only through DATABASE_LISTEN_URL). A lost connection is replaced after a
 * second. Nothing listens on SQLite, or when nobody subscribed.
 */
@Injectable()
export class ChangeNotifications implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(ChangeNotifications.name);
  private readonly listeners = new Map<string, ChangeListener[]>();
  private connection?: pg.Client;
  private heartbeat?: NodeJS.Timeout;
  /** The heartbeat sent and not yet heard. */
  private awaited?: { token: string; timer: NodeJS.Timeout };
  private relisten?: NodeJS.Timeout;
  private stopped = false;
  /** Whether notifications are seen to arrive now. */
  hearing = false;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(databaseConfig.KEY) private readonly config: DatabaseConfig,
  ) {}

  /** Tells `listener` of every notification on `channel` (a plain identifier), from start-up on; a channel may have several. */
  subscribe(channel: string, listener: ChangeListener): void {
    if (!/^[a-z_]+$/.test(channel)) throw new Error(`Not a channel name: ${channel}`);
    this.listeners.set(channel, [...(this.listeners.get(channel) ?? []), listener]);
  }

  /**
   * A change this instance is writing through `manager`, which the table's trigger will notify on
   * `channel` with `payload` (a key, or EVERY_ROW): this instance's listeners are told as soon as it
   * commits, as if the notification had come back. The writer must not wait for its own: until it
   * arrives, the client just told "deleted" or "revoked" (RFC 7009 §2.2, RFC 7592 §2.3) would be
   * served from what this instance keeps. Stores call it from every write of a row that may be
   * kept, after the statement, through the same manager (issue 43).
   */
  committing(manager: EntityManager, channel: string, payload: string): void {
    if (!this.listeners.has(channel)) return;
    afterCommit(manager, () => this.tell(channel, payload));
  }

  async onApplicationBootstrap(): Promise<void> {
    if (this.listeners.size === 0) return;
    if (this.config.poolMode === 'transaction' && this.config.listenUrl === undefined) {
      // LISTEN through a transaction pool registers on a server connection that other clients then
      // get (PgBouncer: "got packet 'A' from server when not linked") and delivers nothing here.
      this.logger.warn('DATABASE_POOL_MODE=transaction without DATABASE_LISTEN_URL: change notifications are not heard, so nothing is kept between requests (set DATABASE_LISTEN_URL to PostgreSQL itself, or to a session-mode pool)');
      return;
    }
    await this.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.stop();
  }

  private async start(): Promise<void> {
    const driver = this.dataSource.driver;
    if (!(driver instanceof PostgresDriver) || !driver.master) return;
    // The pool's own connection settings (URL, TLS, timeouts), for one connection of its own;
    // DATABASE_LISTEN_URL, when set, says where it connects (its parsed values win over the pool's).
    const listenAt = this.config.listenUrl === undefined ? {} : { connectionString: this.config.listenUrl };
    const connection = new pg.Client({ ...(driver.master as pg.Pool).options, ...listenAt, keepAlive: true, query_timeout: HEARTBEAT_TIMEOUT_MS, application_name: LISTENER_NAME });
    this.connection = connection;
    connection.on('notification', ({ channel, payload }) => {
      if (channel === HEARTBEAT_CHANNEL) this.heard(connection, payload);
      else this.tell(channel, payload);
    });
    connection.on('error', () => this.lost(connection));
    connection.on('end', () => this.lost(connection));
    try {
      await connection.connect();
      await connection.query([...this.listeners.keys(), HEARTBEAT_CHANNEL].map((channel) => `LISTEN "${channel}"`).join('; '));
    } catch (error) {
      this.logger.warn(`Change notifications are not heard (${error instanceof Error ? error.message : String(error)}); trying again`);
      this.lost(connection);
      return;
    }
    if (this.connection !== connection) return;
    this.beat(connection);
    this.heartbeat = setInterval(() => this.beat(connection), HEARTBEAT_MS).unref();
  }

  private tell(channel: string, payload: string | undefined): void {
    for (const listener of this.listeners.get(channel) ?? []) listener.changed(payload);
  }

  private async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.relisten);
    const connection = this.connection;
    this.lost(connection);
    await connection?.end().catch(() => undefined);
  }

  private beat(connection: pg.Client): void {
    // The last one never came back: deaf.
    if (this.awaited !== undefined) return this.lost(connection);
    const token = randomBytes(12).toString('base64url');
    this.awaited = { token, timer: setTimeout(() => this.lost(connection), HEARTBEAT_TIMEOUT_MS).unref() };
    postgresPool(this.dataSource)
      .query({ name: statementName(this.dataSource, 'latchkey_heartbeat'), text: `SELECT pg_notify('${HEARTBEAT_CHANNEL}', $1)`, values: [token] })
      .catch(() => this.lost(connection));
  }

  private heard(connection: pg.Client, token: string | undefined): void {
    const awaited = this.awaited;
    if (this.connection !== connection || awaited === undefined || awaited.token !== token) return;
    clearTimeout(awaited.timer);
    this.awaited = undefined;
    if (this.hearing) return;
    this.hearing = true;
    for (const listener of [...this.listeners.values()].flat()) listener.hearing();
  }

  private lost(connection: pg.Client | undefined): void {
    if (connection === undefined || this.connection !== connection) return;
    this.connection = undefined;
    clearInterval(this.heartbeat);
    clearTimeout(this.awaited?.timer);
    this.awaited = undefined;
    if (this.hearing) {
      this.hearing = false;
      for (const listener of [...this.listeners.values()].flat()) listener.deaf();
    }
    connection.end().catch(() => undefined);
    if (!this.stopped) this.relisten = setTimeout(() => void this.start(), RELISTEN_MS).unref();
  }
}
