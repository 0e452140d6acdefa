import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { formatScope, isSubset, normalizeScope, splitScope } from '../common/scope.js';
import { AuditService } from '../audit/audit.service.js';
import { Clock } from '../common/clock.js';
import { Transactions } from '../database/transactions.js';
import type { User } from '../users/user.entity.js';
import { ConsentStore } from './consent.store.js';

/** The person a browser's session signs in, as the authorization endpoint needs them (ConsentsService.signedInConsenting). */
export interface SignedInPerson {
  user: User;
  /** Whether the person already allowed the client everything the request asks. */
  consented: boolean;
  /** Whether the client already signed the person in through this session (SessionStore.recordClient need not look). */
  clientRecorded: boolean;
  /** What the person allowed the client so far, or null when nothing (for grant, which then need not read it again). */
  consentScope: string | null;
}

/** The consent's scope as the caller read it already (null: no consent), so that grant need not read it. */
export interface KnownConsent {
  current: string | null;
}

/** Remembers what each user allowed each client, so a later request within it skips the consent page. */
@Injectable()
export class ConsentsService {
  constructor(
    private readonly store: ConsentStore,
    private readonly audit: AuditService,
    private readonly transactions: Transactions,
    private readonly clock: Clock,
  ) {}

  /**
   * The person session `sessionId` signs in, if it is `userId`'s and live now, and whether they
   * already allowed `clientId` the whole of `scope` (a narrower or equal request skips the consent
   * page). One statement (ConsentStore.signedIn); null when nobody is signed in by it.
   */
  async signedInConsenting(sessionId: string, userId: string, clientId: string, scope: readonly string[]): Promise<SignedInPerson | null> {
    const found = await this.store.signedIn(sessionId, userId, clientId, this.clock.now());
    if (!found) return null;
    const consented = found.consentScope !== null && isSubset(scope, splitScope(found.consentScope));
    return { user: found.user, consented, clientRecorded: found.clientRecorded, consentScope: found.consentScope };
  }

  /**
   * Adds the scope to what the user has granted the client (the union; one row per user and
   * client). `known`: the consent as the caller read it (POST /consent, in its signed-in
   * statement), which spares a read; without it, the consent is read here. Nothing is written or
   * audited when the union is what the person allowed already.
   *
   * Concurrency: the write applies only if the row still holds the scope read (ConsentStore.write),
   * else the consent is read again and merged once more. The old read-then-upsert let the later of
   * two grants of different scopes for the same person and client overwrite the earlier one, and
   * re-insert a consent withdrawn between its read and its write; taking the scope from the read at
   * the start of POST /consent would widen that window to the whole request, and the condition
   * closes it instead. Were the retry to lose a second race too, the grant is dropped: this
   * authorization still goes ahead (the form was the consent), and the person sees the consent page
   * again next time. A lost write only ever costs one more consent page, never a right the person
   * did not give: a row is written only as the union of what it held and what this form allowed.
   */
  async grant(userId: string, clientId: string, scope: readonly string[], known?: KnownConsent): Promise<void> {
    const current = known ? known.current : await this.readScope(userId, clientId);
    if (await this.widen(userId, clientId, scope, current)) return;
    // Another grant or a withdrawal changed the row since it was read: once more, from what it holds now.
    await this.widen(userId, clientId, scope, await this.readScope(userId, clientId));
  }

  /** Writes the union of `current` and `scope`, if the row still holds `current`; false when it does not. */
  private async widen(userId: string, clientId: string, scope: readonly string[], current: string | null): Promise<boolean> {
    const merged = formatScope(normalizeScope([...splitScope(current ?? ''), ...scope]));
    if (merged === current) return true;
    // The grant and its audit event commit together, and only when the grant was written.
    return this.transactions.run(async (manager) => {
      if (!(await this.store.write({ id: randomUUID(), userId, clientId, scope: merged }, current, this.clock.now(), manager))) return false;
      await this.audit.record({ actor: `user:${userId}`, action: 'consent.given', subject: `client:${clientId}`, details: { scope: merged } }, manager);
      return true;
    });
  }

  private async readScope(userId: string, clientId: string): Promise<string | null> {
    return (await this.store.find(userId, clientId))?.scope ?? null;
  }
}
