import { Controller, Get, Inject, Res, ServiceUnavailableException } from '@nestjs/common';
import { HealthCheckService, HealthIndicatorService, type HealthIndicatorFunction } from '@nestjs/terminus';
import type { FastifyReply } from 'fastify';
import { REDIS_CLIENT, type RedisClient } from '../redis/redis.constants.js';
import { DatabaseReadinessStore } from './database-readiness.store.js';

/** How long the readiness probe waits for the database before calling it down. */
const DATABASE_PING_TIMEOUT_MS = 1500;
/** How long it waits for Redis, when REDIS_URL is configured. */
const REDIS_PING_TIMEOUT_MS = 1000;

/**
 * Probes for the load balancer and the orchestrator (@nestjs/terminus). Liveness says the process
 * answers; readiness says it can serve, i.e. its database answers and can write (a read-only
 * PostgreSQL during a failover is not ready) and, when configured, Redis does. (Requests are still served while Redis is down, with per-instance rate limits, but the
 * instances no longer enforce one limit together: an operator should know.) Never cached.
 */
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly database: DatabaseReadinessStore,
    private readonly indicators: HealthIndicatorService,
    @Inject(REDIS_CLIENT) private readonly redis: RedisClient,
  ) {}

  @Get('live')
  live(@Res() reply: FastifyReply): void {
    void reply.header('Cache-Control', 'no-store').send({ status: 'ok' });
  }

  @Get('ready')
  async ready(@Res() reply: FastifyReply): Promise<void> {
    reply.header('Cache-Control', 'no-store');
    try {
      const result = await this.health.check(this.readinessChecks());
      void reply.send(result);
    } catch (error) {
      if (!(error instanceof ServiceUnavailableException)) throw error;
      // 503 with the application's error key and each dependency's up/down, but not the driver's
      // error messages: the probe may be reachable from outside.
      const result = error.getResponse() as { details?: Record<string, { status: string }> };
      const details = Object.fromEntries(Object.entries(result.details ?? {}).map(([name, check]) => [name, { status: check.status }]));
      void reply.code(503).send({ status: 'error', error: 'temporarily_unavailable', error_description: 'A dependency of this instance is down', details });
    }
  }

  private readinessChecks(): HealthIndicatorFunction[] {
    const checks: HealthIndicatorFunction[] = [async () => this.indicators.check('database').attempt(() => this.database.assertWritable()).withTimeout(DATABASE_PING_TIMEOUT_MS)];
    const redis = this.redis;
    if (redis) {
      checks.push(async () => this.indicators.check('redis').attempt(async () => void (await redis.ping())).withTimeout(REDIS_PING_TIMEOUT_MS));
    }
    return checks;
  }
}
