import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import type { Repository } from 'typeorm';
import { formatScope, isSubset, normalizeScope, splitScope } from '../common/scope.js';
import { AuditService } from '../audit/audit.service.js';
import { Consent } from './consent.entity.js';

/** Remembers what each user allowed each client, so a later request within it skips the consent page. */
@Injectable()
export class ConsentsService {
  constructor(
    @InjectRepository(Consent) private readonly consents: Repository<Consent>,
    private readonly audit: AuditService,
  ) {}

  async covers(userId: string, clientId: string, scope: readonly string[]): Promise<boolean> {
    const consent = await this.consents.findOneBy({ userId, clientId });
    return consent !== null && isSubset(scope, splitScope(consent.scope));
  }

  /** Adds the scope to what the user has granted the client (the union; one row per user and client). */
  async grant(userId: string, clientId: string, scope: readonly string[]): Promise<void> {
    const existing = await this.consents.findOneBy({ userId, clientId });
    const merged = formatScope(normalizeScope([...splitScope(existing?.scope ?? ''), ...scope]));
    // An upsert on the (user, client) unique index: two instances granting at once cannot create two rows.
    await this.consents.upsert({ id: existing?.id ?? randomUUID(), userId, clientId, scope: merged }, { conflictPaths: ['userId', 'clientId'] });
    if (merged !== existing?.scope) await this.audit.record({ actor: `user:${userId}`, action: 'consent.given', subject: `client:${clientId}`, details: { scope: merged } });
  }
}
