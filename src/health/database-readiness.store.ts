import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';

/**
 * PostgreSQL: whether a transaction begun now could write. It cannot on a standby (in recovery), nor
 * on a primary that a failover manager brought back read-only before demoting or promoting it
 * (Patroni), nor where default_transaction_read_only is on; every write would fail there (25006).
 */
const POSTGRES_WRITABLE = `SELECT current_setting('transaction_read_only') = 'off' AS "writable"`;

/** What the readiness probe asks the database: one round trip. */
@Injectable()
export class DatabaseReadinessStore {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Throws when the database does not answer, or (PostgreSQL) answers but cannot write. */
  async assertWritable(): Promise<void> {
    if (this.dataSource.options.type !== 'postgres') {
      await this.dataSource.query('SELECT 1');
      return;
    }
    const [row] = (await this.dataSource.query(POSTGRES_WRITABLE)) as { writable: boolean }[];
    if (!row?.writable) throw new Error('The database is read-only');
  }
}
