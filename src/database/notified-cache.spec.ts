import { jest } from '@jest/globals';
import type { DatabaseConfig } from '../config/database.config.js';
import type { ChangeNotifications } from './change-notifications.js';
import { EVERY_ROW, NotifiedCache } from './notified-cache.js';
import { rowBytes } from './row-bytes.js';

/** Notifications that are heard until the test says otherwise. */
function notifications(): ChangeNotifications & { subscribed: string[] } {
  const subscribed: string[] = [];
  return { hearing: true, subscribed, subscribe: (channel: string) => void subscribed.push(channel) } as unknown as ChangeNotifications & { subscribed: string[] };
}

const POSTGRES = { dialect: 'postgres', rowCacheSeconds: 60 } as DatabaseConfig;
/** Every key has the same length and every row the same shape: each entry costs the same. */
const key = (i: number): string => `key-${String(i).padStart(4, '0')}`;
const rowOf = (i: number): Record<string, unknown> => ({ id: `row-${String(i).padStart(4, '0')}`, scope: 'notes:read', expiresAt: new Date(0), n: 1 });
const ENTRY = rowBytes(key(0), rowOf(0));

describe(NotifiedCache.name, () => {
  /** A cache with room for `rows` entries, and the lookups that reached the database, by key. */
  function cacheFor(rows: number, config = POSTGRES) {
    const heard = notifications();
    const cache = new NotifiedCache(heard, config, 'changes', rows * ENTRY);
    const reads: string[] = [];
    const lookup = (i: number) =>
      cache.row(key(i), async () => {
        reads.push(key(i));
        return rowOf(i);
      });
    return { cache, heard, reads, lookup };
  }

  it('estimates a row from its key and values', () => {
    expect(rowBytes('k', { a: 'xy' })).toBeLessThan(rowBytes('k', { a: 'xyz' }));
    expect(rowBytes('k', { a: ['x', 'y'] })).toBeGreaterThan(rowBytes('k', { a: [] }));
    expect(rowBytes('k', { a: new Date(0) })).toBeGreaterThan(rowBytes('k', { a: null }));
    expect(ENTRY).toBeGreaterThan(2 * key(0).length + 2 * 'row-0000'.length);
  });

  it('answers a kept row without reading, and counts hits and misses', async () => {
    const { cache, reads, lookup } = cacheFor(10);
    expect(await lookup(1)).toEqual(rowOf(1));
    expect(await lookup(1)).toEqual(rowOf(1));
    expect(await lookup(1)).toEqual(rowOf(1));
    expect(reads).toEqual([key(1)]);
    expect(cache.stats()).toMatchObject({ hits: 2, misses: 1, entries: 1, bytes: ENTRY, budgetBytes: 10 * ENTRY, evictions: 0, invalidations: 0 });
  });

  it('stays within its budget, evicting instead of starting again empty', async () => {
    const { cache, lookup } = cacheFor(10);
    for (let i = 0; i < 50; i++) await lookup(i);
    const stats = cache.stats();
    expect(stats.bytes).toBeLessThanOrEqual(stats.budgetBytes);
    expect(stats).toMatchObject({ entries: 10, bytes: 10 * ENTRY, evictions: 40, invalidations: 0, misses: 50 });
  });

  it('evicts the oldest entries first', async () => {
    const { reads, lookup } = cacheFor(10);
    for (let i = 0; i < 12; i++) await lookup(i);
    reads.length = 0;
    for (let i = 2; i < 12; i++) await lookup(i);
    expect(reads).toEqual([]);
    await lookup(0);
    expect(reads).toEqual([key(0)]);
  });

  it('keeps evicting in order through many evictions and changes', async () => {
    const { cache, reads, lookup } = cacheFor(100);
    for (let i = 0; i < 5_000; i++) {
      await lookup(i);
      if (i % 7 === 0) cache.changed(key(i - 50));
    }
    reads.length = 0;
    for (let i = 4_900; i < 5_000; i++) await lookup(i);
    // The last 100 kept, but those a change dropped meanwhile.
    expect(reads).toEqual(Array.from({ length: 100 }, (_, j) => 4_900 + j).filter((i) => (i + 50) % 7 === 0 && i + 50 < 5_000).map(key));
    expect(cache.stats()).toMatchObject({ bytes: cache.stats().entries * ENTRY });
    expect(cache.stats().bytes).toBeLessThanOrEqual(cache.stats().budgetBytes);
  });

  it('keeps an old entry that was hit recently, and evicts the next oldest instead', async () => {
    const { cache, reads, lookup } = cacheFor(10);
    for (let i = 0; i < 10; i++) await lookup(i);
    await lookup(0); // the oldest, in the older half: moved to the end
    await lookup(10);
    await lookup(11);
    reads.length = 0;
    await lookup(0);
    expect(reads).toEqual([]);
    await lookup(1);
    await lookup(2);
    expect(reads).toEqual([key(1), key(2)]);
    expect(cache.stats().bytes).toBeLessThanOrEqual(cache.stats().budgetBytes);
  });

  it('does not move an entry hit in the newer half (no Map write): it ages as if it had not been hit', async () => {
    const { reads, lookup } = cacheFor(10);
    for (let i = 0; i < 10; i++) await lookup(i);
    await lookup(5); // five entries came after it: in the newer half, left where it is
    for (let i = 10; i < 16; i++) await lookup(i);
    reads.length = 0;
    await lookup(6);
    await lookup(5);
    expect(reads).toEqual([key(5)]);
  });

  it('drops a changed row at once, counting it as an invalidation, not an eviction', async () => {
    const { cache, reads, lookup } = cacheFor(10);
    await lookup(1);
    await lookup(2);
    cache.changed(key(1));
    cache.changed(key(7)); // not kept: nothing to count
    reads.length = 0;
    await lookup(1);
    await lookup(2);
    expect(reads).toEqual([key(1)]);
    expect(cache.stats()).toMatchObject({ invalidations: 1, evictions: 0, entries: 2, bytes: 2 * ENTRY });
    cache.changed(EVERY_ROW);
    expect(cache.stats()).toMatchObject({ invalidations: 3, entries: 0, bytes: 0 });
  });

  it('forgets everything when notifications stop or start again, and reads while it hears none', async () => {
    const { cache, heard, reads, lookup } = cacheFor(10);
    await lookup(1);
    await lookup(2);
    cache.deaf();
    (heard as { hearing: boolean }).hearing = false;
    reads.length = 0;
    await lookup(1);
    await lookup(1);
    expect(reads).toEqual([key(1), key(1)]);
    expect(cache.stats()).toMatchObject({ invalidations: 2, entries: 0, bytes: 0, misses: 4 });
    (heard as { hearing: boolean }).hearing = true;
    cache.hearing();
    await lookup(1);
    await lookup(1);
    expect(reads).toEqual([key(1), key(1), key(1)]);
  });

  it('does not keep a row read while a notification arrived (the generation counter)', async () => {
    const { cache, heard } = cacheFor(10);
    let reads = 0;
    const read = async () => {
      reads++;
      cache.changed(key(1));
      return rowOf(1);
    };
    await cache.row(key(1), read);
    await cache.row(key(1), read);
    expect(reads).toBe(2);
    expect(cache.stats().entries).toBe(0);
    expect(heard.subscribed).toEqual(['changes']);
  });

  it('keeps a row no longer than `until` says, and not at all when it says undefined', async () => {
    const { cache } = cacheFor(10);
    const now = jest.spyOn(Date, 'now');
    try {
      now.mockReturnValue(1_000_000);
      let reads = 0;
      const read = async () => (reads++, rowOf(1));
      await cache.row(key(1), read, () => 1_000_500);
      await cache.row(key(1), read, () => 1_000_500);
      expect(reads).toBe(1);
      now.mockReturnValue(1_000_500);
      await cache.row(key(1), read, () => 1_000_500);
      expect(reads).toBe(2);
      expect(cache.stats().entries).toBe(0);
      await cache.row(key(2), read, () => undefined);
      await cache.row(key(2), read, () => undefined);
      expect(reads).toBe(4);
    } finally {
      now.mockRestore();
    }
  });

  it('does not keep a row larger than the whole budget', async () => {
    const { cache, lookup } = cacheFor(1);
    await lookup(1);
    await cache.row('big', async () => ({ blob: 'x'.repeat(10 * ENTRY) }));
    expect(cache.stats()).toMatchObject({ entries: 1, evictions: 0, bytes: ENTRY });
  });

  it.each([
    ['a budget of 0', 0, POSTGRES],
    ['SQLite', 10, { dialect: 'sqlite', rowCacheSeconds: 60 } as DatabaseConfig],
    ['ROW_CACHE_SECONDS=0', 10, { dialect: 'postgres', rowCacheSeconds: 0 } as DatabaseConfig],
  ])('keeps nothing and counts nothing with %s', async (_name, rows, config) => {
    const { cache, heard, reads, lookup } = cacheFor(rows, config);
    await lookup(1);
    await lookup(1);
    expect(reads).toEqual([key(1), key(1)]);
    expect(cache.stats()).toEqual({ hits: 0, misses: 0, evictions: 0, invalidations: 0, bytes: 0, entries: 0, budgetBytes: 0 });
    expect(heard.subscribed).toEqual([]);
  });
});
