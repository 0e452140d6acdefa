import { Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { PerMinuteRateLimitGuard } from './per-minute-rate-limit.guard.js';

/**
 * RATE_LIMIT_API_PER_MINUTE on the data API, per access token. Runs after AccessTokenGuard and
 * keys on the token's stored id, never on the token itself.
 */
@Injectable()
export class ApiRateLimitGuard extends PerMinuteRateLimitGuard {
  protected readonly name = 'api';

  protected limit(): number {
    return this.config.apiPerMinute;
  }

  protected subject(request: FastifyRequest & { user: { tokenId: string } }): string[] {
    return [request.user.tokenId];
  }

  protected describe(limit: number): string {
    return `This access token may make ${limit} requests a minute.`;
  }
}
