import { Injectable } from '@nestjs/common';
import { AuditService } from '../audit/audit.service.js';
import { Transactions } from '../database/transactions.js';
import { RecoveryCodeStore } from './recovery-code.store.js';
import { TotpFactorStore } from './totp-factor.store.js';

/** What the account page and users:show say about a person's factors: kinds and dates, never a secret. */
export interface FactorSummary {
  totp: { createdAt: Date; lastUsedAt: Date | null } | null;
  recoveryCodes: { left: number; createdAt: Date | null };
}

/**
 * A person's factors as records: what they have, and their removal. No secret is opened here, so
 * the admin CLI uses it without the factors' encryption key, rate limits or HTTP settings.
 */
@Injectable()
export class FactorRecords {
  constructor(
    private readonly totps: TotpFactorStore,
    private readonly recoveryCodes: RecoveryCodeStore,
    private readonly transactions: Transactions,
    private readonly audit: AuditService,
  ) {}

  async summary(userId: string): Promise<FactorSummary> {
    const [totp, codes] = await Promise.all([this.totps.find(userId), this.recoveryCodes.list(userId)]);
    return {
      totp: totp ? { createdAt: totp.createdAt, lastUsedAt: totp.lastUsedAt } : null,
      recoveryCodes: { left: codes.filter((code) => code.usedAt === null).length, createdAt: codes[0]?.createdAt ?? null },
    };
  }

  /** Whether the person has enrolled a second factor (enrolling is opting in: it is then always asked for). */
  async hasSecondFactor(userId: string): Promise<boolean> {
    return (await this.totps.find(userId)) !== null;
  }

  /** Removes the authenticator and the recovery codes; whether there was an authenticator. `actor`: `user:<id>` or `cli`. */
  async removeAll(userId: string, actor: string): Promise<boolean> {
    return this.transactions.run(async (manager) => {
      const removed = await this.totps.delete(userId, manager);
      const codes = await this.recoveryCodes.deleteAll(userId, manager);
      await this.audit.record({ actor, action: 'factor.removed', subject: `user:${userId}`, details: { totp: removed, recovery_codes: codes } }, manager);
      return removed;
    });
  }
}
