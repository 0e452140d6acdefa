import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue 43, finding 3: when a copy of a passkey was detected (WebAuthn §6.1.1, a signature counter
 * that did not grow). Set once, by the detection's own conditional UPDATE; while it is set the
 * passkey signs nobody in, until the person or an administrator removes it. Null for every other row.
 */
export class PasskeyClonedAt1766600100000 implements MigrationInterface {
  name = 'PasskeyClonedAt1766600100000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const postgres = queryRunner.connection.driver.options.type === 'postgres';
    await queryRunner.query(postgres ? `ALTER TABLE "passkeys" ADD "cloned_at" TIMESTAMP WITH TIME ZONE` : `ALTER TABLE "passkeys" ADD COLUMN "cloned_at" datetime`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "passkeys" DROP COLUMN "cloned_at"`);
  }
}
