import { Inject, Injectable } from '@nestjs/common';
import type { ThrottlerStorage } from '@nestjs/throttler';
import { mailConfig, type MailConfig } from '../config/mail.config.js';
import { RATE_LIMIT_STORAGE } from '../rate-limit/memory-throttler.storage.js';
import { rateLimitKey } from '../rate-limit/rate-limit-key.js';

/**
 * How many messages a page may have sent to one address, and to one person, within the window
 * (PASSWORD_RESET_LIMIT per PASSWORD_RESET_WINDOW_SECONDS): counted in the shared rate-limit
 * storage (Redis when set), so the limit holds across instances. Keys are hashes: no address is
 * kept in clear. Both counters always count, known address or not, so that the work is the same.
 */
@Injectable()
export class EmailThrottle {
  constructor(
    @Inject(RATE_LIMIT_STORAGE) private readonly storage: ThrottlerStorage,
    @Inject(mailConfig.KEY) private readonly config: MailConfig,
  ) {}

  /** True when this message may go: neither the address nor the person (or, unknown, the address again under its person key) is over the limit. */
  async allow(kind: string, email: string, personKey: string): Promise<boolean> {
    const ttl = this.config.resetWindowSeconds * 1000;
    const [address, person] = await Promise.all([
      this.storage.increment(`email:${kind}:address:${rateLimitKey(email.toLowerCase())}`, ttl, this.config.resetLimit, 0, 'email-links'),
      this.storage.increment(`email:${kind}:person:${rateLimitKey(personKey)}`, ttl, this.config.resetLimit, 0, 'email-links'),
    ]);
    return !address.isBlocked && !person.isBlocked;
  }
}
