import { Inject, Injectable } from '@nestjs/common';
import { toString as qrToString } from 'qrcode';
import { AuditService } from '../audit/audit.service.js';
import type { Acr } from '../common/authentication-context.js';
import { Clock } from '../common/clock.js';
import { appConfig, type AppConfig } from '../config/app.config.js';
import { factorsConfig, type FactorsConfig } from '../config/factors.config.js';
import { Transactions } from '../database/transactions.js';
import { LoginThrottle } from '../rate-limit/login-throttle.service.js';
import type { User } from '../users/user.entity.js';
import { FactorSecretCipher } from './factor-secret-cipher.js';
import { FactorRecords, type FactorSummary } from './factor-records.service.js';
import { RecoveryCodeStore } from './recovery-code.store.js';
import { looksLikeRecoveryCode, newRecoveryCode, RECOVERY_CODE_COUNT, recoveryCodeHash } from './recovery-codes.js';
import { TotpFactorStore } from './totp-factor.store.js';
import { groupedSecret, matchingStep, newTotpSecret, otpauthUri } from './totp.js';

/** What the enrolment page shows: the QR code (SVG drawn here, no outbound request) and the key for typing. */
export interface EnrolmentView {
  secret: string;
  groupedSecret: string;
  uri: string;
  qrSvg: string;
}

export type { FactorSummary };

/** The outcome of a code typed after the password. */
export type CodeCheck = { ok: true; kind: 'otp' | 'recovery' } | { ok: false; waitSeconds?: number };

/**
 * One-time codes (RFC 6238) and recovery codes: enrolment, checks, removal. Every enrolment,
 * removal, use and failure is an audit event. Replays are refused by the database (a conditional
 * UPDATE), so they are refused on every instance.
 */
@Injectable()
export class SecondFactors {
  constructor(
    private readonly records: FactorRecords,
    private readonly totps: TotpFactorStore,
    private readonly recoveryCodes: RecoveryCodeStore,
    private readonly cipher: FactorSecretCipher,
    private readonly throttle: LoginThrottle,
    private readonly transactions: Transactions,
    private readonly audit: AuditService,
    private readonly clock: Clock,
    @Inject(appConfig.KEY) private readonly app: AppConfig,
    @Inject(factorsConfig.KEY) private readonly config: FactorsConfig,
  ) {}

  summary(userId: string): Promise<FactorSummary> {
    return this.records.summary(userId);
  }

  hasSecondFactor(userId: string): Promise<boolean> {
    return this.records.hasSecondFactor(userId);
  }

  /** Which factors the person has: one-time codes, passkeys. */
  enrolled(userId: string): Promise<{ oneTimeCodes: boolean; passkeys: boolean }> {
    return this.records.enrolled(userId);
  }

  /** Whether an administrator (per person or server-wide) requires a second factor of this person. */
  mustHaveSecondFactor(user: User): boolean {
    return this.config.mfaRequired || user.requireMfa;
  }

  /** A new secret for the enrolment page; nothing is stored until the person confirms it with a code. */
  newSecret(): string {
    return newTotpSecret();
  }

  async enrolmentView(user: User, secret: string): Promise<EnrolmentView> {
    const uri = otpauthUri(secret, user.username, new URL(this.app.issuer).host);
    const qrSvg = await qrToString(uri, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 });
    return { secret, groupedSecret: groupedSecret(secret), uri, qrSvg };
  }

  /**
   * Confirms an enrolment with the first code from the app: stores the sealed secret (that code's
   * step already used) and ten new recovery codes, which are returned to be shown once. Undefined
   * when the code is wrong or the person already has an authenticator.
   */
  async confirm(user: User, secret: string, code: string, address: string): Promise<string[] | undefined> {
    const wait = await this.throttle.beginCode(address, user.id);
    if (wait > 0) return undefined;
    const now = this.clock.now();
    const step = matchingStep(secret, code.trim(), now);
    if (step === undefined) {
      await this.audit.record({ actor: `user:${user.id}`, action: 'factor.totp.enrolment_failed', subject: `user:${user.id}` });
      return undefined;
    }
    await this.throttle.codeSucceeded(address, user.id);
    const sealedSecret = await this.cipher.seal(secret, user.id);
    const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
    const stored = await this.transactions.run(async (manager) => {
      if (!(await this.totps.insert({ userId: user.id, sealedSecret, lastUsedStep: step, createdAt: now, lastUsedAt: now }, manager))) return false;
      await this.recoveryCodes.replace(user.id, codes.map((c) => recoveryCodeHash(user.id, c)), now, manager);
      await this.audit.record({ actor: `user:${user.id}`, action: 'factor.totp.enrolled', subject: `user:${user.id}`, details: { recovery_codes: RECOVERY_CODE_COUNT } }, manager);
      return true;
    });
    return stored ? codes : undefined;
  }

  /**
   * Checks a code typed after the password: a one-time code (accepted once per step, on any
   * instance) or a recovery code (usable once). Wrong codes are throttled as passwords are.
   */
  async check(user: User, typed: string, address: string): Promise<CodeCheck> {
    const wait = await this.throttle.beginCode(address, user.id);
    if (wait > 0) return { ok: false, waitSeconds: wait };
    const kind = await this.accept(user, typed.trim());
    const subject = `user:${user.id}`;
    if (!kind) {
      await this.audit.record({ actor: subject, action: 'factor.failed', subject, details: { kind: looksLikeRecoveryCode(typed) ? 'recovery' : 'otp' } });
      return { ok: false };
    }
    await this.throttle.codeSucceeded(address, user.id);
    await this.audit.record({ actor: subject, action: kind === 'otp' ? 'factor.totp.used' : 'factor.recovery_code.used', subject });
    return { ok: true, kind };
  }

  /** New recovery codes (the old ones die), returned to be shown once. */
  async regenerateRecoveryCodes(user: User): Promise<string[]> {
    const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
    await this.transactions.run(async (manager) => {
      await this.recoveryCodes.replace(user.id, codes.map((c) => recoveryCodeHash(user.id, c)), this.clock.now(), manager);
      await this.audit.record({ actor: `user:${user.id}`, action: 'factor.recovery_codes.regenerated', subject: `user:${user.id}`, details: { count: RECOVERY_CODE_COUNT } }, manager);
    });
    return codes;
  }

  /** Turns one-time codes off: the authenticator and its recovery codes (passkeys stay). */
  removeOneTimeCodes(userId: string, actor: string): Promise<boolean> {
    return this.records.removeOneTimeCodes(userId, actor);
  }

  /** The level of the strongest factor the person has: a recent sign-in with it is what changing a factor needs. */
  strongestLevel(userId: string): Promise<Acr> {
    return this.records.strongestLevel(userId);
  }

  /**
   * Whether removing one factor would leave a person who must have a second factor (per person or
   * server-wide) with none: one-time codes and each passkey count as one.
   */
  async removalWouldLeaveNone(user: User): Promise<boolean> {
    return this.mustHaveSecondFactor(user) && (await this.records.factorCount(user.id)) <= 1;
  }

  private async accept(user: User, typed: string): Promise<'otp' | 'recovery' | undefined> {
    if (looksLikeRecoveryCode(typed)) {
      return (await this.recoveryCodes.use(user.id, recoveryCodeHash(user.id, typed), this.clock.now())) ? 'recovery' : undefined;
    }
    const factor = await this.totps.find(user.id);
    const secret = factor && (await this.cipher.open(factor.sealedSecret, user.id));
    if (!secret) return undefined;
    const now = this.clock.now();
    const step = matchingStep(secret, typed.replace(/\s/g, ''), now);
    return step !== undefined && (await this.totps.useStep(user.id, step, now)) ? 'otp' : undefined;
  }
}
