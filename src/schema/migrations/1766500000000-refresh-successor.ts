import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue 36, idempotent refresh: a rotated refresh token keeps its successor pair, sealed with a key
 * only the rotated token's value opens (successor-seal.ts), so that the same client presenting it
 * again within REFRESH_REUSE_GRACE_SECONDS gets the same answer. Written by the rotation's own
 * conditional UPDATE; null when the grace is off and for every other row.
 */
export class RefreshSuccessor1766500000000 implements MigrationInterface {
  name = 'RefreshSuccessor1766500000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const postgres = queryRunner.connection.driver.options.type === 'postgres';
    await queryRunner.query(postgres ? `ALTER TABLE "tokens" ADD "successor" text` : `ALTER TABLE "tokens" ADD COLUMN "successor" text`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "tokens" DROP COLUMN "successor"`);
  }
}
