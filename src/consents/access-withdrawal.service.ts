import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { IsNull, type DataSource } from 'typeorm';
import { AuditService } from '../audit/audit.service.js';
import { Client } from '../clients/client.entity.js';
import { AuthorizationCode } from '../codes/authorization-code.entity.js';
import { Clock } from '../common/clock.js';
import { splitScope } from '../common/scope.js';
import { Token } from '../tokens/token.entity.js';
import { Consent } from './consent.entity.js';

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
 * code of that person for that client dies in the same transaction, so no instance can keep
 * serving it (the bearer guard checks revocation on every request).
 */
@Injectable()
export class AccessWithdrawalService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly clock: Clock,
    private readonly audit: AuditService,
  ) {}

  async list(userId: string): Promise<GrantedAccess[]> {
    const consents = await this.dataSource.getRepository(Consent).find({ where: { userId }, order: { createdAt: 'ASC' } });
    if (consents.length === 0) return [];
    const clients = new Map((await this.dataSource.getRepository(Client).findBy(consents.map((c) => ({ id: c.clientId })))).map((c) => [c.id, c]));
    // One grouped query over the (user_id, client_id) index.
    const activity = await this.dataSource
      .getRepository(Token)
      .createQueryBuilder('token')
      .select('token.clientId', 'clientId')
      .addSelect('MAX(token.createdAt)', 'lastActiveAt')
      .where('token.userId = :userId', { userId })
      .groupBy('token.clientId')
      .getRawMany<{ clientId: string; lastActiveAt: string | Date }>();
    const lastActive = new Map(activity.map((a) => [a.clientId, new Date(a.lastActiveAt)]));
    return consents.map((consent) => ({
      clientId: consent.clientId,
      clientName: clients.get(consent.clientId)?.name ?? consent.clientId,
      scope: splitScope(consent.scope),
      grantedAt: consent.createdAt,
      lastActiveAt: lastActive.get(consent.clientId),
    }));
  }

  /** Withdraws everything the person granted the client. False when there was nothing to withdraw. */
  withdraw(userId: string, clientId: string): Promise<boolean> {
    return this.dataSource.transaction(async (manager) => {
      const now = this.clock.now();
      const removed = await manager.delete(Consent, { userId, clientId });
      await manager.update(AuthorizationCode, { userId, clientId, consumedAt: IsNull() }, { consumedAt: now });
      const tokens = await manager.update(Token, { userId, clientId, revokedAt: IsNull() }, { revokedAt: now });
      await this.audit.record({ actor: `user:${userId}`, action: 'consent.withdrawn', subject: `client:${clientId}`, details: { tokens_revoked: tokens.affected ?? 0 } }, manager);
      return (removed.affected ?? 0) > 0;
    });
  }
}
