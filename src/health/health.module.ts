import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { RedisModule } from '../redis/redis.module.js';
import { DatabaseReadinessStore } from './database-readiness.store.js';
import { HealthController } from './health.controller.js';

/** GET /health/live and /health/ready. */
@Module({ imports: [TerminusModule.forRoot({ logger: false }), RedisModule], controllers: [HealthController], providers: [DatabaseReadinessStore] })
export class HealthModule {}
