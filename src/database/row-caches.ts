import { Inject, Injectable } from '@nestjs/common';
import { databaseConfig, type DatabaseConfig } from '../config/database.config.js';
import { ChangeNotifications } from './change-notifications.js';
import { NotifiedCache, type RowCacheStats } from './notified-cache.js';

/** The caches of rows kept per instance; the name is the `cache` label of their metrics. */
export type RowCacheName = 'tokens' | 'clients';

const MIB = 1024 * 1024;

/**
 * Every NotifiedCache of the application, by name. The stores create their caches here, and the
 * metrics (src/metrics/row-cache.metrics.ts) read their numbers at scrape time, so neither the
 * stores nor src/database know of the metrics. One per application (DatabaseModule): several
 * applications in one process (the e2e tests) count apart.
 */
@Injectable()
export class RowCaches {
  private readonly caches = new Map<RowCacheName, NotifiedCache>();

  constructor(
    private readonly notifications: ChangeNotifications,
    @Inject(databaseConfig.KEY) private readonly config: DatabaseConfig,
  ) {}

  /** A cache of the rows `channel` notifies about, bounded by `budgetMb` MiB of estimated memory (0: off). */
  create(name: RowCacheName, channel: string, budgetMb: number): NotifiedCache {
    if (this.caches.has(name)) throw new Error(`The row cache ${name} exists already`);
    const cache = new NotifiedCache(this.notifications, this.config, channel, budgetMb * MIB);
    this.caches.set(name, cache);
    return cache;
  }

  /** Each cache's numbers, by name. */
  stats(): [RowCacheName, RowCacheStats][] {
    return [...this.caches].map(([name, cache]) => [name, cache.stats()]);
  }
}
