import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import { Clock } from '../common/clock.js';
import { generateSecret, hashSecret, SECRET_PREFIX } from '../common/secrets.js';
import { appConfig, type AppConfig } from '../config/app.config.js';
import { EmailLink, type LinkPurpose } from './email-link.entity.js';
import { EmailLinkStore } from './email-link.store.js';
import { EMAIL_ROUTES } from './email-routes.js';

/** Recognisable to secret scanners, as the other secrets (common/secrets.ts SECRET_PREFIX); 256 random bits. */

/** Where each purpose's link lands. */
const LANDING: Record<LinkPurpose, string> = {
  invite: EMAIL_ROUTES.invitation,
  verify_email: EMAIL_ROUTES.verify,
  reset_password: EMAIL_ROUTES.reset,
  change_email: EMAIL_ROUTES.confirmChange,
  register: EMAIL_ROUTES.registerConfirm,
};

export interface IssuedLink {
  /** The URL to send: the issuer's, with the secret; shown to nobody but the address (or the administrator with --print-link). */
  url: string;
  expiresAt: Date;
}

/** The single-use links: made with a fresh secret (its hash stored), looked at, and used up once. */
@Injectable()
export class EmailLinks {
  constructor(
    private readonly store: EmailLinkStore,
    private readonly clock: Clock,
    @Inject(appConfig.KEY) private readonly app: AppConfig,
  ) {}

  /** A new link for `purpose`; the person's earlier unused links of that purpose stop working. */
  async issue(purpose: LinkPurpose, userId: string | null, email: string, lifetimeSeconds: number, manager?: EntityManager): Promise<IssuedLink> {
    const secret = generateSecret(SECRET_PREFIX.emailLink);
    const now = this.clock.now();
    const link = Object.assign(new EmailLink(), { id: randomUUID(), purpose, userId, email, tokenHash: hashSecret(secret), expiresAt: this.clock.inSeconds(lifetimeSeconds), usedAt: null, createdAt: now });
    const write = async (within: EntityManager) => {
      if (userId !== null) await this.store.retireOthers(userId, purpose, now, within);
      await this.store.insert(link, within);
    };
    await (manager ? write(manager) : this.store.inTransaction(write));
    return { url: `${this.app.issuer}${LANDING[purpose]}?token=${encodeURIComponent(secret)}`, expiresAt: link.expiresAt };
  }

  /** The issuer's URL, which every link starts with. */
  get issuer(): string {
    return this.app.issuer;
  }

  /** The link, if it is still usable, without using it: a GET shows its form (mail scanners open links; only the form's POST acts). */
  peek(purpose: LinkPurpose, token: unknown): Promise<EmailLink | null> {
    if (!isToken(token)) return Promise.resolve(null);
    return this.store.findUsable(hashSecret(token), purpose, this.clock.now());
  }

  /** Uses the link up, once across every instance; null when unknown, used or expired. */
  consume(purpose: LinkPurpose, token: unknown): Promise<EmailLink | null> {
    if (!isToken(token)) return Promise.resolve(null);
    return this.store.consume(hashSecret(token), purpose, this.clock.now());
  }
}

function isToken(value: unknown): value is string {
  return typeof value === 'string' && value.length > SECRET_PREFIX.emailLink.length && value.length <= 100 && value.startsWith(SECRET_PREFIX.emailLink);
}

/** "15 minutes", "7 days": a lifetime as a message says it. */
export function describeLifetime(seconds: number): string {
  if (seconds % 86400 === 0) return seconds === 86400 ? '1 day' : `${seconds / 86400} days`;
  if (seconds % 3600 === 0) return seconds === 3600 ? '1 hour' : `${seconds / 3600} hours`;
  const minutes = Math.ceil(seconds / 60);
  return minutes === 1 ? '1 minute' : `${minutes} minutes`;
}
