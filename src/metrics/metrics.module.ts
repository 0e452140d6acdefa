import { Module } from '@nestjs/common';
import { HttpMetricsHook } from './http-metrics.hook.js';
import { MetricsService } from './metrics.service.js';
import { RowCacheMetrics } from './row-cache.metrics.js';

/** Prometheus metrics: the registry every module counts into, the HTTP timing hook, the row caches' numbers and the /metrics listener. */
@Module({ providers: [MetricsService, HttpMetricsHook, RowCacheMetrics], exports: [MetricsService] })
export class MetricsModule {}
