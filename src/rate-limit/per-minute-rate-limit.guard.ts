import { Inject, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { ThrottlerStorage } from '@nestjs/throttler';
import type { FastifyRequest } from 'fastify';
import { rateLimitConfig, type RateLimitConfig } from '../config/rate-limit.config.js';
import { RATE_LIMIT_STORAGE } from './memory-throttler.storage.js';
import { rateLimitKey } from './rate-limit-key.js';
import { tooManyRequests } from './too-many-requests.js';

const MINUTE_MS = 60_000;

/**
 * A per-minute request limit on an identity that an earlier guard established (the authenticated
 * client, the access token), so it must be listed after that guard in @UseGuards. It counts in
 * a storage of @nestjs/throttler's contract: Redis when configured (shared by all instances), else
 * memory.
 *
 * Not @nestjs/throttler's ThrottlerGuard: besides not loading under Jest (rate-limit.module.ts), as
 * a global guard it runs before any route guard, so it could only key on what the request claims,
 * not on who authenticated; and a named throttler answers with a `Retry-After-<name>` header.
 */
export abstract class PerMinuteRateLimitGuard implements CanActivate {
  /** The throttler name: the storage keeps each name's counters apart. */
  protected abstract readonly name: string;

  constructor(
    @Inject(RATE_LIMIT_STORAGE) private readonly storage: ThrottlerStorage,
    @Inject(rateLimitConfig.KEY) protected readonly config: RateLimitConfig,
  ) {}

  /** Requests allowed per minute; 0 switches the limit off. */
  protected abstract limit(): number;
  /** Who is counted, from what the earlier guard put on the request. */
  protected abstract subject(request: FastifyRequest): string[];
  /** The first sentence of the 429's error_description. */
  protected abstract describe(limit: number): string;

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const limit = this.limit();
    if (limit === 0) return true;
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    // blockDuration 0: a client over the limit waits for a slot to free up, with no extra penalty.
    const record = await this.storage.increment(rateLimitKey(...this.subject(request)), MINUTE_MS, limit, 0, this.name);
    if (record.isBlocked) throw tooManyRequests(record.timeToBlockExpire, this.describe(limit));
    return true;
  }
}
