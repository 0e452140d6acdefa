import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue 47: indexes on LOWER(username) and LOWER(email), the expressions UserStore compares for
 * SCIM's case-insensitive userName (RFC 7643 §4.1.1, the lookup every connector sends before it
 * creates a person) and for a forgotten password, a registration or an invitation by address.
 * Without them each of those reads every row of `users`: 100,000 people, 100,000 rows per request.
 * Both dialects index expressions; the entity declares them with `synchronize: false`, since
 * TypeORM's schema builder cannot describe an expression index.
 */
export class UsersLowercaseIndexes1766900100000 implements MigrationInterface {
  name = 'UsersLowercaseIndexes1766900100000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE INDEX "IDX_users_lower_username" ON "users" (LOWER("username"))`);
    await queryRunner.query(`CREATE INDEX "IDX_users_lower_email" ON "users" (LOWER("email"))`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "IDX_users_lower_email"`);
    await queryRunner.query(`DROP INDEX "IDX_users_lower_username"`);
  }
}
