import { Injectable } from '@nestjs/common';
import { AuditService, type AuditActor } from '../audit/audit.service.js';
import { PasskeyStore } from '../factors/passkey.store.js';

/** What the rest of Latchkey may know of a passkey: never its key material. */
export interface PasskeySummary {
  id: string;
  name: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  /** The credential may be synced to the person's other devices (WebAuthn's backup eligibility). */
  synced: boolean;
  /** When a copy of it was detected: it signs nobody in since (ClonedPasskeys). */
  blockedSince: Date | null;
}

/** A person's passkeys, for the account page, the admin CLI and the second-factor policy. */
@Injectable()
export class PasskeysService {
  constructor(
    private readonly store: PasskeyStore,
    private readonly audit: AuditService,
  ) {}

  async listFor(userId: string): Promise<PasskeySummary[]> {
    const passkeys = await this.store.listFor(userId);
    return passkeys.map((p) => ({ id: p.id, name: p.name, createdAt: p.createdAt, lastUsedAt: p.lastUsedAt, synced: p.backupEligible, blockedSince: p.clonedAt }));
  }

  countFor(userId: string): Promise<number> {
    return this.store.countFor(userId);
  }

  /** Removes one of the person's own passkeys; false when `passkeyId` is not theirs (or no longer exists). `actor`: the person, with their address. */
  async remove(userId: string, passkeyId: string, actor: AuditActor = `user:${userId}`): Promise<boolean> {
    const removed = await this.store.removeOf(passkeyId, userId);
    if (removed) await this.audit.record({ actor, action: 'passkey.removed', subject: `user:${userId}`, details: { passkey: passkeyId } });
    return removed;
  }
}
