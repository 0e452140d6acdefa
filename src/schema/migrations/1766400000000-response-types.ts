import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue 37: a client's response_types as registered (RFC 7591 §2), so that an administrator can
 * allow OpenID Connect's `id_token` (Core §3.2.2.1) beside the implicit grant without `token`.
 * Null for every existing row: its response types stay those its grant types imply.
 */
export class ResponseTypes1766400000000 implements MigrationInterface {
  name = 'ResponseTypes1766400000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const postgres = queryRunner.connection.driver.options.type === 'postgres';
    await queryRunner.query(postgres ? `ALTER TABLE "clients" ADD "response_types" text` : `ALTER TABLE "clients" ADD COLUMN "response_types" text`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "clients" DROP COLUMN "response_types"`);
  }
}
