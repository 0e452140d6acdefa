import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue 47, PostgreSQL: room in each page of the tokens table for the UPDATE every refresh makes
 * (the rotation's `consumed_at` and sealed `successor`, token.store.ts) and every revocation.
 * With pages packed full (fillfactor 100), the new version of the row lands on another page and
 * each of the table's seven indexes gets an entry for it; with 20% kept free, it stays on its page
 * and, since neither column is indexed, PostgreSQL updates it in place of the indexes (a HOT
 * update, "Heap-Only Tuples" in the PostgreSQL documentation, storage/heap/README.HOT). Pages
 * written before this migration keep their packing until rewritten (VACUUM FULL); the table is
 * mostly short-lived rows, so the setting takes hold as the purge replaces them. SQLite has no
 * such setting.
 */
export class TokensFillfactor1766900000000 implements MigrationInterface {
  name = 'TokensFillfactor1766900000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    if (queryRunner.connection.driver.options.type !== 'postgres') return;
    await queryRunner.query(`ALTER TABLE "tokens" SET (fillfactor = 80)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    if (queryRunner.connection.driver.options.type !== 'postgres') return;
    await queryRunner.query(`ALTER TABLE "tokens" RESET (fillfactor)`);
  }
}
