import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity.js';
import { dateParameter, execute } from '../../database/prepared-statement.js';
import { Transactions } from '../../database/transactions.js';
import { SamlHandoff } from './saml-handoff.entity.js';

/** Handoffs never collected (the browser went away) are deleted this many at a time, when a new one is kept. */
const PURGE_BATCH = 100;

/** The saml_handoffs table: kept by the ACS, then taken once by a conditional DELETE. */
@Injectable()
export class SamlHandoffStore {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly transactions: Transactions,
  ) {}

  private get dialect(): string {
    return this.dataSource.options.type;
  }

  /** Keeps a new handoff, and clears a bounded batch of expired ones. */
  async insert(row: SamlHandoff, now: Date): Promise<void> {
    const skipLocked = this.dialect === 'postgres' ? ' FOR UPDATE SKIP LOCKED' : '';
    const purge = `DELETE FROM "saml_handoffs" WHERE "handle_hash" IN (SELECT "handle_hash" FROM "saml_handoffs" WHERE "expires_at" < ? LIMIT ?${skipLocked})`;
    await this.transactions.write(async (manager) => {
      await manager.insert(SamlHandoff, row as QueryDeepPartialEntity<SamlHandoff>);
      await execute(manager, purge, [dateParameter(now, this.dialect), PURGE_BATCH]);
    });
  }

  /**
   * The handoff `handleHash` for provider `idpId`, deleted by this call, when it has not expired;
   * null otherwise. Exactly one of concurrent callers (on any instance) gets it: the DELETE's row count decides.
   */
  async take(handleHash: string, idpId: string, now: Date): Promise<SamlHandoff | null> {
    const row = await this.dataSource.getRepository(SamlHandoff).findOneBy({ handleHash });
    if (!row || row.idpId !== idpId) return null;
    const sql = 'DELETE FROM "saml_handoffs" WHERE "handle_hash" = ? AND "idp_id" = ? AND "expires_at" > ?';
    const deleted = await this.transactions.write((manager) => execute(manager, sql, [handleHash, idpId, dateParameter(now, this.dialect)]));
    return deleted === 1 ? row : null;
  }
}
