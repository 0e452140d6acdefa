import type { DatabaseConfig } from '../config/database.config.js';
import type { ChangeListener, ChangeNotifications } from './change-notifications.js';

/** A notification's payload that stands for every row (TRUNCATE). */
export const EVERY_ROW = '*';

type Row = Record<string, unknown>;

/**
 * Rows kept in the process and dropped when PostgreSQL says they changed: a trigger on the table
 * notifies `channel` with the row's key when a change commits, whoever made it (this app, another
 * instance, the CLI, an administrator's SQL), and every instance drops that key (ChangeNotifications).
 *
 * Never stale in a way that widens a right:
 * - Rows are kept only while notifications are seen to arrive (ChangeNotifications proves it every
 *   5 s). When they are not, the cache is emptied and every lookup reads the database; when they
 *   are again, it starts empty (one sent meanwhile may have been missed).
 * - A row read while a notification arrived is not kept (the generation counter): the read may
 *   have seen the state before that change.
 * - Each entry lives at most ROW_CACHE_SECONDS, and less when `until` says so (a token's expiry).
 * - The instance that writes a change does not wait for its own notification: the store that writes
 *   the row tells ChangeNotifications (committing), which drops it here the moment the write commits,
 *   not before (a read in between would keep the old row again) and not later (issue 43).
 * What remains is the delivery of a notification to the other instances, well under a millisecond
 * on one network: a request that reaches another instance in that instant is answered as if it had
 * come just before the change. Misses (unknown keys) are not kept. Callers get the driver's row and decode it into an
 * entity of their own, so no caller can change another's copy.
 */
export class NotifiedCache implements ChangeListener {
  private readonly entries = new Map<string, { row: Row; until: number }>();
  /** Moves on with every notification and every change of hearing: a read that straddles one is not kept. */
  private generation = 0;

  /** How long a row may be kept; 0 when nothing is (SQLite, or ROW_CACHE_SECONDS=0): every lookup then reads. */
  private readonly ttlMs: number;

  constructor(
    private readonly notifications: ChangeNotifications,
    config: DatabaseConfig,
    channel: string,
    private readonly maxEntries: number,
  ) {
    this.ttlMs = config.dialect === 'postgres' ? config.rowCacheSeconds * 1000 : 0;
    if (this.ttlMs > 0) notifications.subscribe(channel, this);
  }

  /**
   * The row under `key`: kept, or read by `read` and then kept until `until(row)` (epoch ms; at
   * most ttlMs from now), or not kept at all when `until` answers undefined.
   */
  async row(key: string, read: () => Promise<Row | undefined>, until: (row: Row) => number | undefined = () => Infinity): Promise<Row | undefined> {
    if (this.ttlMs === 0 || !this.notifications.hearing) return read();
    const now = Date.now();
    const cached = this.entries.get(key);
    if (cached !== undefined && cached.until > now) return cached.row;
    const generation = this.generation;
    const row = await read();
    const keepUntil = row === undefined ? undefined : until(row);
    if (row !== undefined && keepUntil !== undefined && this.notifications.hearing && generation === this.generation) {
      // Past the bound, start again empty rather than grow without one (and rather than pay for an LRU on every hit).
      if (this.entries.size >= this.maxEntries) this.entries.clear();
      this.entries.set(key, { row, until: Math.min(keepUntil, now + this.ttlMs) });
    }
    return row;
  }

  changed(key: string | undefined): void {
    this.generation++;
    if (key === undefined || key === EVERY_ROW) this.entries.clear();
    else this.entries.delete(key);
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
