import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { Transactions } from '../database/transactions.js';
import { UpstreamSession } from './upstream-session.entity.js';

/** The upstream_sessions table: which upstream sign-in started which of our sessions. */
@Injectable()
export class UpstreamSessionStore {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly transactions: Transactions,
  ) {}

  async record(row: UpstreamSession): Promise<void> {
    await this.transactions.write((manager) => manager.insert(UpstreamSession, row));
  }

  find(sessionId: string): Promise<UpstreamSession | null> {
    return this.dataSource.manager.findOneBy(UpstreamSession, { sessionId });
  }

  /** Our sessions an upstream back-channel logout names: by its sid when it gave one, else every session of its subject. */
  async sessionsOf(idpId: string, match: { upstreamSid?: string; subject?: string }): Promise<string[]> {
    const where = match.upstreamSid !== undefined ? { idpId, upstreamSid: match.upstreamSid, ...(match.subject !== undefined ? { subject: match.subject } : {}) } : { idpId, subject: match.subject };
    const rows = await this.dataSource.manager.find(UpstreamSession, { select: { sessionId: true }, where });
    return rows.map((row) => row.sessionId);
  }
}
