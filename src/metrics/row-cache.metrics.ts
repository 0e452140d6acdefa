import { Injectable } from '@nestjs/common';
import { Counter, Gauge } from 'prom-client';
import { RowCaches, type RowCacheName } from '../database/row-caches.js';
import type { RowCacheStats } from '../database/notified-cache.js';
import { MetricsService } from './metrics.service.js';

type Stat = keyof RowCacheStats;

/**
 * The row caches' numbers (issue 47), label `cache` = tokens | clients. The caches count in plain
 * fields (NotifiedCache.stats); these metrics read them when Prometheus scrapes (`collect`), so a
 * lookup, on every API request, makes no call into prom-client.
 */
@Injectable()
export class RowCacheMetrics {
  constructor(metrics: MetricsService, caches: RowCaches) {
    const counters: [string, string, Stat][] = [
      ['latchkey_row_cache_hits_total', 'Lookups answered from the instance\'s row cache.', 'hits'],
      ['latchkey_row_cache_misses_total', 'Lookups that read the database while the row cache is on.', 'misses'],
      ['latchkey_row_cache_evictions_total', 'Rows dropped from the row cache to stay within its memory budget.', 'evictions'],
      ['latchkey_row_cache_invalidations_total', 'Rows dropped from the row cache because they changed (or notifications were lost).', 'invalidations'],
    ];
    const gauges: [string, string, Stat][] = [
      ['latchkey_row_cache_bytes', 'Estimated memory of the rows kept in the row cache.', 'bytes'],
      ['latchkey_row_cache_entries', 'Rows kept in the row cache.', 'entries'],
      ['latchkey_row_cache_budget_bytes', 'The row cache\'s memory budget (*_CACHE_MB); 0 when it is off.', 'budgetBytes'],
    ];
    const read = (stat: Stat, set: (cache: RowCacheName, value: number) => void): void => {
      for (const [cache, stats] of caches.stats()) set(cache, stats[stat]);
    };
    for (const [name, help, stat] of counters) {
      new Counter({
        name,
        help,
        labelNames: ['cache'] as const,
        registers: [metrics.registry],
        collect() {
          // The cache holds the running total: report it as it is.
          this.reset();
          read(stat, (cache, value) => this.inc({ cache }, value));
        },
      });
    }
    for (const [name, help, stat] of gauges) {
      new Gauge({
        name,
        help,
        labelNames: ['cache'] as const,
        registers: [metrics.registry],
        collect() {
          read(stat, (cache, value) => this.set({ cache }, value));
        },
      });
    }
  }
}
