import type { DatabaseConfig } from '../config/database.config.js';
import type { ChangeListener, ChangeNotifications } from './change-notifications.js';
import { rowBytes } from './row-bytes.js';

/** A notification's payload that stands for every row (TRUNCATE). */
export const EVERY_ROW = '*';

type Row = Record<string, unknown>;

/** A kept row: until when, what it is estimated to cost (row-bytes.ts), and when it was put at the end of the Map. */
interface Entry {
  row: Row;
  until: number;
  bytes: number;
  sequence: number;
}

/**
 * What a cache has done and holds, read at scrape time (src/metrics/row-cache.metrics.ts): plain
 * numbers counted in the cache, so that a lookup costs no call into the metrics library.
 */
export interface RowCacheStats {
  /** Lookups answered from the cache. */
  hits: number;
  /** Lookups that read the database while the cache is on (not kept, expired, or not hearing). */
  misses: number;
  /** Entries dropped to stay within the budget. */
  evictions: number;
  /** Entries dropped because their row changed, or may have (notifications lost or found again). */
  invalidations: number;
  /** The estimate of what the entries cost (row-bytes.ts). */
  bytes: number;
  entries: number;
  /** The bound of `bytes`; 0 when the cache is off (SQLite, ROW_CACHE_SECONDS=0, or its *_CACHE_MB=0). */
  budgetBytes: number;
}

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
 *
 * Bounded by memory (issue 47): each entry's cost is estimated once, when it is kept, and the
 * oldest entries are evicted while the total exceeds the budget (TOKEN_CACHE_MB, CLIENT_CACHE_MB).
 * Evicting only drops what is kept, like a change does, so it never serves anything stale.
 */
export class NotifiedCache implements ChangeListener {
  /** In the order entries were kept or last moved to the end (a Map iterates in insertion order): the first is the one to evict. */
  private readonly entries = new Map<string, Entry>();
  /**
   * Walks `entries` from the oldest, across evictions. A new iterator for each eviction would step
   * again over every slot deleted at the front of the Map's table (V8 keeps them until it
   * rehashes), a cost that grows with the cache; this one passes each slot once.
   */
  private oldest: Iterator<[string, Entry], undefined> = this.entries.entries();
  /** Moves on with every notification and every change of hearing: a read that straddles one is not kept. */
  private generation = 0;
  /** Counts every entry put at the end of `entries`: an entry's `sequence` says how many came after it. */
  private sequence = 0;
  private bytes = 0;
  private hits = 0;
  private misses = 0;
  private evictions = 0;
  private invalidations = 0;

  /** How long a row may be kept; 0 when nothing is (SQLite, ROW_CACHE_SECONDS=0, or no budget): every lookup then reads. */
  private readonly ttlMs: number;
  /** The bound of the entries' estimated bytes; 0 when nothing is kept. */
  private readonly budgetBytes: number;

  constructor(
    private readonly notifications: ChangeNotifications,
    config: DatabaseConfig,
    channel: string,
    budgetBytes: number,
  ) {
    this.ttlMs = config.dialect === 'postgres' && budgetBytes > 0 ? config.rowCacheSeconds * 1000 : 0;
    this.budgetBytes = this.ttlMs > 0 ? budgetBytes : 0;
    if (this.ttlMs > 0) notifications.subscribe(channel, this);
  }

  /**
   * The row under `key`: kept, or read by `read` and then kept until `until(row)` (epoch ms; at
   * most ttlMs from now), or not kept at all when `until` answers undefined.
   */
  async row(key: string, read: () => Promise<Row | undefined>, until: (row: Row) => number | undefined = () => Infinity): Promise<Row | undefined> {
    if (this.ttlMs === 0) return read();
    if (!this.notifications.hearing) {
      this.misses++;
      return read();
    }
    const now = Date.now();
    const cached = this.entries.get(key);
    if (cached !== undefined) {
      if (cached.until > now) {
        this.hits++;
        this.refresh(key, cached);
        return cached.row;
      }
      this.remove(key, cached);
    }
    this.misses++;
    const generation = this.generation;
    const row = await read();
    const keepUntil = row === undefined ? undefined : until(row);
    if (row !== undefined && keepUntil !== undefined && this.notifications.hearing && generation === this.generation) {
      this.keep(key, row, Math.min(keepUntil, now + this.ttlMs));
    }
    return row;
  }

  changed(key: string | undefined): void {
    this.generation++;
    if (key === undefined || key === EVERY_ROW) return this.clear();
    const entry = this.entries.get(key);
    if (entry === undefined) return;
    this.remove(key, entry);
    this.invalidations++;
  }

  hearing(): void {
    this.forget();
  }

  deaf(): void {
    this.forget();
  }

  stats(): RowCacheStats {
    const { hits, misses, evictions, invalidations, bytes, budgetBytes } = this;
    return { hits, misses, evictions, invalidations, bytes, entries: this.entries.size, budgetBytes };
  }

  private forget(): void {
    this.generation++;
    this.clear();
  }

  private clear(): void {
    this.invalidations += this.entries.size;
    this.entries.clear();
    this.oldest = this.entries.entries();
    this.bytes = 0;
  }

  /** Keeps the row at the end of the order, then evicts from the front until within the budget. */
  private keep(key: string, row: Row, until: number): void {
    const previous = this.entries.get(key);
    // Another lookup of the same key may have kept it while this one read: replace it.
    if (previous !== undefined) this.remove(key, previous);
    const bytes = rowBytes(key, row);
    // Expired already, or more than the whole budget: keeping it would only evict the rest.
    if (until <= Date.now() || bytes > this.budgetBytes) return;
    this.entries.set(key, { row, until, bytes, sequence: this.sequence++ });
    this.bytes += bytes;
    while (this.bytes > this.budgetBytes) {
      let next = this.oldest.next();
      // Done only once it passed the last entry: start again from the first.
      if (next.done) next = (this.oldest = this.entries.entries()).next();
      if (next.done) break;
      const [oldest, entry] = next.value;
      this.remove(oldest, entry);
      this.evictions++;
    }
  }

  /**
   * An approximate LRU. A true one moves the entry to the end on every hit: a Map delete and set
   * on every API request, for the many hits on entries that eviction will not reach soon anyway.
   * Here an entry moves only once it is in the older half (more entries were kept after it than
   * half of those held): one in the newer half has at least as many entries before it, each to be
   * evicted first. An entry hit again between entering the older half and reaching the front goes
   * back to the end, as under LRU, so a row in steady use stays; most hits write nothing.
   */
  private refresh(key: string, entry: Entry): void {
    if (this.sequence - entry.sequence <= this.entries.size / 2) return;
    this.entries.delete(key);
    entry.sequence = this.sequence++;
    this.entries.set(key, entry);
  }

  private remove(key: string, entry: Entry): void {
    this.entries.delete(key);
    this.bytes -= entry.bytes;
  }
}
