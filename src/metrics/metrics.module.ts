import { Module } from '@nestjs/common';
import { HttpMetricsHook } from './http-metrics.hook.js';
import { MetricsService } from './metrics.service.js';

/** Prometheus metrics: the registry every module counts into, the HTTP timing hook and the /metrics listener. */
@Module({ providers: [MetricsService, HttpMetricsHook], exports: [MetricsService] })
export class MetricsModule {}
