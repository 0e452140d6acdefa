import { Injectable } from '@nestjs/common';
import { AuditService, type AuditActor } from '../audit/audit.service.js';
import { ClientStore } from '../clients/client.store.js';
import { AuthorizationCodeStore } from '../codes/authorization-code.store.js';
import { Clock } from '../common/clock.js';
import { splitScope } from '../common/scope.js';
import { Transactions } from '../database/transactions.js';
import { DeviceAuthorizationStore } from '../device-codes/device-authorization.store.js';
import { TokenStore } from '../tokens/token.store.js';
import type { KeysetPage } from '../database/keyset-page.js';
import type { User } from '../users/user.entity.js';
import type { Consent } from './consent.entity.js';
import { ConsentStore } from './consent.store.js';

/** An application holding access to a person's data, as the access page shows it. */
export interface GrantedAccess {
  clientId: string;
  clientName: string;
  scope: string[];
  grantedAt: Date;
  /** When a token was last issued to it for this person (a code redeemed or a refresh). */
  lastActiveAt?: Date;
}

/**
 * What a person has granted, and its withdrawal: the consent goes, and every token and pending
 * code of that person for that client (and device request approved but not yet picked up) dies in the same transaction, so no instance can keep
 * serving it (the bearer guard checks revocation on every request).
 */
@Injectable()
export class AccessWithdrawalService {
  constructor(
    private readonly consents: ConsentStore,
    private readonly clients: ClientStore,
    private readonly tokens: TokenStore,
    private readonly codes: AuthorizationCodeStore,
    private readonly devices: DeviceAuthorizationStore,
    private readonly transactions: Transactions,
    private readonly clock: Clock,
    private readonly audit: AuditService,
  ) {}

  async list(userId: string): Promise<GrantedAccess[]> {
    return this.describe(userId, await this.consents.listOf(userId));
  }

  /** One page of what the person granted, by client id (the admin API, issue 48); `afterClientId`: the last of the previous page. */
  async page(userId: string, limit: number, afterClientId: string | null): Promise<GrantedAccess[]> {
    return this.describe(userId, await this.consents.pageOf(userId, limit, afterClientId));
  }

  private async describe(userId: string, consents: Consent[]): Promise<GrantedAccess[]> {
    if (consents.length === 0) return [];
    const clients = new Map((await this.clients.findByIds(consents.map((c) => c.clientId))).map((c) => [c.id, c]));
    const lastActive = await this.tokens.lastIssuedByClient(userId);
    return consents.map((consent) => ({
      clientId: consent.clientId,
      clientName: clients.get(consent.clientId)?.name ?? consent.clientId,
      scope: splitScope(consent.scope),
      grantedAt: consent.createdAt,
      lastActiveAt: lastActive.get(consent.clientId),
    }));
  }

  /** The people who consented to the client, a page at a time by username (the admin API's list of a client's grants). */
  grantsOf(clientId: string, page: KeysetPage): Promise<(Consent & { user: User })[]> {
    return this.consents.pageOfClient(clientId, page);
  }

  /** What the person allowed the client, or null. */
  consentOf(userId: string, clientId: string): Promise<Consent | null> {
    return this.consents.find(userId, clientId);
  }

  /**
   * Withdraws everything the person granted the client. False when there was nothing to withdraw.
   * `actor`: the person themselves (the access page), or an administrator with their address (the admin API, issue 48).
   */
  async withdraw(userId: string, clientId: string, actor: AuditActor = `user:${userId}`): Promise<boolean> {
    const removed = await this.transactions.run(async (manager) => {
      const now = this.clock.now();
      const deleted = await this.consents.delete(userId, clientId, manager);
      await this.codes.consumeAllOf(userId, clientId, now, manager);
      // A device the person allowed but that has not polled yet gets nothing either (RFC 8628).
      await this.devices.denyApprovedOf(userId, clientId, manager);
      const revoked = await this.tokens.revokeAllOf(userId, clientId, now, manager);
      await this.audit.record({ actor, action: 'consent.withdrawn', subject: `client:${clientId}`, details: { user_id: userId, tokens_revoked: revoked } }, manager);
      return deleted;
    });
    return removed;
  }
}
