import { Logger } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { DataSource } from 'typeorm';
import { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver.js';
import { postgresPool } from './prepared-statement.js';

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
 * PostgreSQL LISTEN on one channel, on a connection of its own, with delivery proven rather than
 * assumed: every 5 s a heartbeat is sent through the pool (as any writer's NOTIFY would be) and must
 * come back on the listening connection within 2 s. Until the first one has, after a loss, a failed
 * heartbeat or a dropped connection, `hearing` is false and the listener is told. A pooler in
 * transaction mode (PgBouncer) answers LISTEN and delivers nothing: that is caught too. Lost
 * connections are replaced after a second.
 */
export class ChangeNotifications {
  private readonly logger = new Logger(ChangeNotifications.name);
  private connection?: pg.Client;
  private heartbeat?: NodeJS.Timeout;
  /** The heartbeat sent and not yet heard. */
  private awaited?: { token: string; timer: NodeJS.Timeout };
  private relisten?: NodeJS.Timeout;
  private stopped = false;
  /** Whether notifications are seen to arrive now. */
  hearing = false;

  constructor(
    private readonly dataSource: DataSource,
    private readonly channel: string,
    private readonly listener: ChangeListener,
  ) {}

  async start(): Promise<void> {
    const driver = this.dataSource.driver;
    if (!(driver instanceof PostgresDriver) || !driver.master) return;
    // The pool's own connection settings (URL, TLS, timeouts), for one connection of its own.
    const connection = new pg.Client({ ...(driver.master as pg.Pool).options, keepAlive: true, query_timeout: HEARTBEAT_TIMEOUT_MS, application_name: LISTENER_NAME });
    this.connection = connection;
    connection.on('notification', ({ channel, payload }) => (channel === HEARTBEAT_CHANNEL ? this.heard(connection, payload) : this.listener.changed(payload)));
    connection.on('error', () => this.lost(connection));
    connection.on('end', () => this.lost(connection));
    try {
      await connection.connect();
      await connection.query(`LISTEN "${this.channel}"; LISTEN "${HEARTBEAT_CHANNEL}"`);
    } catch (error) {
      this.logger.warn(`Notifications on ${this.channel} are not heard (${error instanceof Error ? error.message : String(error)}); trying again`);
      this.lost(connection);
      return;
    }
    if (this.connection !== connection) return;
    this.beat(connection);
    this.heartbeat = setInterval(() => this.beat(connection), HEARTBEAT_MS).unref();
  }

  async stop(): Promise<void> {
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
      .query({ name: 'latchkey_heartbeat', text: `SELECT pg_notify('${HEARTBEAT_CHANNEL}', $1)`, values: [token] })
      .catch(() => this.lost(connection));
  }

  private heard(connection: pg.Client, token: string | undefined): void {
    const awaited = this.awaited;
    if (this.connection !== connection || awaited === undefined || awaited.token !== token) return;
    clearTimeout(awaited.timer);
    this.awaited = undefined;
    if (this.hearing) return;
    this.hearing = true;
    this.listener.hearing();
  }

  private lost(connection: pg.Client | undefined): void {
    if (connection === undefined || this.connection !== connection) return;
    this.connection = undefined;
    clearInterval(this.heartbeat);
    clearTimeout(this.awaited?.timer);
    this.awaited = undefined;
    if (this.hearing) {
      this.hearing = false;
      this.listener.deaf();
    }
    connection.end().catch(() => undefined);
    if (!this.stopped) this.relisten = setTimeout(() => void this.start(), RELISTEN_MS).unref();
  }
}
