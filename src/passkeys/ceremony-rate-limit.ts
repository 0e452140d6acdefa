import { Inject, Injectable } from '@nestjs/common';
import type { ThrottlerStorage } from '@nestjs/throttler';
import type { FastifyRequest } from 'fastify';
import { passkeyConfig, type PasskeyConfig } from '../config/passkey.config.js';
import { clientAddress } from '../rate-limit/client-address.js';
import { RATE_LIMIT_STORAGE } from '../rate-limit/memory-throttler.storage.js';
import { rateLimitKey } from '../rate-limit/rate-limit-key.js';

const MINUTE_MS = 60_000;

/**
 * Beginning a ceremony stores a challenge, and the sign-in's needs no account: each address may
 * begin PASSKEY_CEREMONIES_PER_MINUTE, counted where the other rate limits count (Redis when
 * configured, shared by every instance), so nobody fills the challenge table.
 */
@Injectable()
export class CeremonyRateLimit {
  constructor(
    @Inject(RATE_LIMIT_STORAGE) private readonly storage: ThrottlerStorage,
    @Inject(passkeyConfig.KEY) private readonly config: PasskeyConfig,
  ) {}

  /** 0 to go ahead, or the seconds to wait. */
  async wait(request: FastifyRequest): Promise<number> {
    const limit = this.config.ceremoniesPerMinute;
    if (limit === 0) return 0;
    const record = await this.storage.increment(rateLimitKey(clientAddress(request)), MINUTE_MS, limit, 0, 'passkey-ceremony');
    return record.isBlocked ? Math.max(1, Math.ceil(record.timeToBlockExpire)) : 0;
  }
}
