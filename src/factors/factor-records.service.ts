import { Injectable } from '@nestjs/common';
import { AuditService, type AuditActor } from '../audit/audit.service.js';
import { Transactions } from '../database/transactions.js';
import { ACR, type Acr } from '../common/authentication-context.js';
import { PasskeyStore } from './passkey.store.js';
import { RecoveryCodeStore } from './recovery-code.store.js';
import { TotpFactorStore } from './totp-factor.store.js';

/** What the account page and users:show say about a person's factors: kinds and dates, never a secret. */
export interface FactorSummary {
  totp: { createdAt: Date; lastUsedAt: Date | null } | null;
  recoveryCodes: { left: number; createdAt: Date | null };
  /** `clonedAt`: when a copy was detected; the passkey signs nobody in since. */
  passkeys: { id: string; name: string; createdAt: Date; lastUsedAt: Date | null; synced: boolean; clonedAt: Date | null }[];
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
    private readonly passkeys: PasskeyStore,
    private readonly transactions: Transactions,
    private readonly audit: AuditService,
  ) {}

  async summary(userId: string): Promise<FactorSummary> {
    const [totp, codes, passkeys] = await Promise.all([this.totps.find(userId), this.recoveryCodes.list(userId), this.passkeys.listFor(userId)]);
    return {
      totp: totp ? { createdAt: totp.createdAt, lastUsedAt: totp.lastUsedAt } : null,
      recoveryCodes: { left: codes.filter((code) => code.usedAt === null).length, createdAt: codes[0]?.createdAt ?? null },
      passkeys: passkeys.map((p) => ({ id: p.id, name: p.name, createdAt: p.createdAt, lastUsedAt: p.lastUsedAt, synced: p.backupEligible, clonedAt: p.clonedAt })),
    };
  }

  /**
   * The level of the strongest factor the person has (issue 33: changing a factor needs a recent
   * sign-in with it): a passkey is phishing-resistant, one-time codes a second factor, else the password.
   * Here and below, a blocked passkey (a copy was detected) is no factor: it signs nobody in, and
   * asking for it would leave the person unable to remove it.
   */
  async strongestLevel(userId: string): Promise<Acr> {
    if ((await this.passkeys.countUsableFor(userId)) > 0) return ACR.phishingResistant;
    return (await this.totps.find(userId)) !== null ? ACR.multiFactor : ACR.password;
  }

  /** Which factors the person has: one-time codes, passkeys. */
  async enrolled(userId: string): Promise<{ oneTimeCodes: boolean; passkeys: boolean }> {
    const [totp, passkeys] = await Promise.all([this.totps.find(userId), this.passkeys.countUsableFor(userId)]);
    return { oneTimeCodes: totp !== null, passkeys: passkeys > 0 };
  }

  /** How many factors beyond the password the person has: one-time codes count as one, each passkey as one. */
  async factorCount(userId: string): Promise<number> {
    const [totp, passkeys] = await Promise.all([this.totps.find(userId), this.passkeys.countUsableFor(userId)]);
    return (totp ? 1 : 0) + passkeys;
  }

  /** Whether the person has enrolled a second factor (enrolling is opting in: it is then always asked for). */
  async hasSecondFactor(userId: string): Promise<boolean> {
    return (await this.totps.find(userId)) !== null;
  }

  /** Removes the authenticator and the recovery codes; whether there was an authenticator. `actor`: `user:<id>`. */
  async removeOneTimeCodes(userId: string, actor: string): Promise<boolean> {
    return this.transactions.run(async (manager) => {
      const removed = await this.totps.delete(userId, manager);
      const codes = await this.recoveryCodes.deleteAll(userId, manager);
      await this.audit.record({ actor, action: 'factor.removed', subject: `user:${userId}`, details: { totp: removed, recovery_codes: codes } }, manager);
      return removed;
    });
  }

  /**
   * users:passkey-remove: an administrator removes one passkey of the person (a blocked one, say,
   * so that they can enrol again), audited as passkey.removed; false when it is not theirs.
   */
  async removePasskey(userId: string, passkeyId: string, actor: AuditActor): Promise<boolean> {
    return this.transactions.run(async (manager) => {
      if (!(await this.passkeys.removeOf(passkeyId, userId, manager))) return false;
      await this.audit.record({ actor, action: 'passkey.removed', subject: `user:${userId}`, details: { passkey: passkeyId } }, manager);
      return true;
    });
  }

  /** users:mfa-reset: removes every factor, one-time codes, recovery codes and passkeys, in one transaction (audited as factor.removed). */
  async removeAll(userId: string, actor: AuditActor): Promise<{ totp: boolean; recoveryCodes: number; passkeys: number }> {
    return this.transactions.run(async (manager) => {
      const totp = await this.totps.delete(userId, manager);
      const recoveryCodes = await this.recoveryCodes.deleteAll(userId, manager);
      const passkeys = await this.passkeys.deleteAll(userId, manager);
      await this.audit.record({ actor, action: 'factor.removed', subject: `user:${userId}`, details: { totp, recovery_codes: recoveryCodes, passkeys } }, manager);
      return { totp, recoveryCodes, passkeys };
    });
  }
}
