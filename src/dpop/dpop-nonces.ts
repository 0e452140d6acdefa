import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { Clock } from '../common/clock.js';
import { dpopConfig, type DpopConfig } from '../config/dpop.config.js';
import { ServerKeysService } from '../keys/server-keys.service.js';

/** The server key the nonces are derived from; shared by every instance through the database. */
const NONCE_KEY_NAME = 'dpop_nonce';

/**
 * Server-provided DPoP nonces (RFC 9449 §8, §9) without state: the nonce of a rotation period is
 * an HMAC of the period's number under a key every instance shares, so any instance recognises a
 * nonce another handed out, and nothing is written per request. The previous period's nonce stays
 * valid (a client that just got one is not refused at the turn), and so does the next one (an
 * instance whose clock runs a little ahead has already moved on).
 */
@Injectable()
export class DpopNonces implements OnModuleInit {
  private key: Buffer | undefined;
  private cached: { period: number; nonces: readonly Buffer[]; current: string } | undefined;

  constructor(
    private readonly serverKeys: ServerKeysService,
    private readonly clock: Clock,
    @Inject(dpopConfig.KEY) private readonly config: DpopConfig,
  ) {}

  async onModuleInit(): Promise<void> {
    this.key = await this.serverKeys.getOrCreate(NONCE_KEY_NAME);
  }

  get required(): boolean {
    return this.config.nonceRequired;
  }

  /** The nonce to hand out now (the DPoP-Nonce response header). */
  current(): string {
    return this.window().current;
  }

  /** Whether `nonce` is the previous, current or next period's (constant-time comparisons). */
  isValid(nonce: string): boolean {
    const presented = Buffer.from(nonce);
    return this.window().nonces.some((expected) => expected.length === presented.length && timingSafeEqual(expected, presented));
  }

  /** The three accepted nonces, computed once per rotation period. */
  private window(): { nonces: readonly Buffer[]; current: string } {
    const period = Math.floor(this.clock.now().getTime() / 1000 / this.config.nonceRotationSeconds);
    if (this.cached?.period !== period) {
      const [previous, current, next] = [period - 1, period, period + 1].map((p) => this.nonceOf(p));
      this.cached = { period, nonces: [previous, current, next].map((n) => Buffer.from(n)), current };
    }
    return this.cached;
  }

  private nonceOf(period: number): string {
    if (!this.key) throw new Error('DpopNonces used before its key was loaded');
    return createHmac('sha256', this.key).update(`dpop-nonce:${period}`).digest().subarray(0, 18).toString('base64url');
  }
}
