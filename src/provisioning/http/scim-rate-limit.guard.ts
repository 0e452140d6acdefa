import { Inject, Injectable } from '@nestjs/common';
import type { ThrottlerStorage } from '@nestjs/throttler';
import type { FastifyRequest } from 'fastify';
import { rateLimitConfig, type RateLimitConfig } from '../../config/rate-limit.config.js';
import { scimConfig, type ScimConfig } from '../../config/scim.config.js';
import { RATE_LIMIT_STORAGE } from '../../rate-limit/memory-throttler.storage.js';
import { PerMinuteRateLimitGuard } from '../../rate-limit/per-minute-rate-limit.guard.js';

/**
 * SCIM_RATE_LIMIT_PER_MINUTE per provisioning client, over all of /scim/v2. Runs after
 * AccessTokenGuard, keyed on the client the token belongs to (a connector renews its token often:
 * a per-token limit would reset with each).
 */
@Injectable()
export class ScimRateLimitGuard extends PerMinuteRateLimitGuard {
  protected readonly name = 'scim';

  constructor(@Inject(RATE_LIMIT_STORAGE) storage: ThrottlerStorage, @Inject(rateLimitConfig.KEY) config: RateLimitConfig, @Inject(scimConfig.KEY) private readonly scim: ScimConfig) {
    super(storage, config);
  }

  protected limit(): number {
    return this.scim.ratePerMinute;
  }

  protected subject(request: FastifyRequest & { user: { clientId: string } }): string[] {
    return ['scim', request.user.clientId];
  }

  protected describe(limit: number): string {
    return `This client may make ${limit} SCIM requests a minute.`;
  }
}
