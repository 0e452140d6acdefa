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
    return { user: found.user, consented: found.consentScope !== null && isSubset(scope, splitScope(found.consentScope)), clientRecorded: found.clientRecorded };
  }

  /** Adds the scope to what the user has granted the client (the union; one row per user and client). */
  async grant(userId: string, clientId: string, scope: readonly string[]): Promise<void> {
    const existing = await this.store.find(userId, clientId);
    const merged = formatScope(normalizeScope([...splitScope(existing?.scope ?? ''), ...scope]));
    if (merged === existing?.scope) return;
    // The grant and its audit event commit together.
    await this.transactions.run(async (manager) => {
      await this.store.upsert({ id: existing?.id ?? randomUUID(), userId, clientId, scope: merged }, manager);
      await this.audit.record({ actor: `user:${userId}`, action: 'consent.given', subject: `client:${clientId}`, details: { scope: merged } }, manager);
    });
  }
}
