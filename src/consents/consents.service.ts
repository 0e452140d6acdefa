import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { formatScope, isSubset, normalizeScope, splitScope } from '../common/scope.js';
import { AuditService } from '../audit/audit.service.js';
import { Transactions } from '../database/transactions.js';
import { ConsentStore } from './consent.store.js';

/** Remembers what each user allowed each client, so a later request within it skips the consent page. */
@Injectable()
export class ConsentsService {
  constructor(
    private readonly store: ConsentStore,
    private readonly audit: AuditService,
    private readonly transactions: Transactions,
  ) {}

  async covers(userId: string, clientId: string, scope: readonly string[]): Promise<boolean> {
    const consent = await this.store.find(userId, clientId);
    return consent !== null && isSubset(scope, splitScope(consent.scope));
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
