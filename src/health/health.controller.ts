import { Controller, Get, Res, ServiceUnavailableException } from '@nestjs/common';
import { HealthCheckService, TypeOrmHealthIndicator } from '@nestjs/terminus';
import type { FastifyReply } from 'fastify';

/** How long the readiness probe waits for the database before calling it down. */
const DATABASE_PING_TIMEOUT_MS = 1500;

/**
 * Probes for the load balancer and the orchestrator (@nestjs/terminus). Liveness says the process
 * answers; readiness says it can serve, i.e. its database answers. Never cached.
 */
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly database: TypeOrmHealthIndicator,
  ) {}

  @Get('live')
  live(@Res() reply: FastifyReply): void {
    void reply.header('Cache-Control', 'no-store').send({ status: 'ok' });
  }

  @Get('ready')
  async ready(@Res() reply: FastifyReply): Promise<void> {
    reply.header('Cache-Control', 'no-store');
    try {
      const result = await this.health.check([() => this.database.pingCheck('database', { timeout: DATABASE_PING_TIMEOUT_MS })]);
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
}
