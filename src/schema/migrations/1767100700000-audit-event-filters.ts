import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue 48 (the admin API's audit log): where a change came from (`ip`, the caller's address, for
 * changes made over HTTP), and an index for each filter (time; actor; subject, which is how a
 * person or a client is found; action), each ending in (at, id) so that a page, newest first, is
 * one index range read that starts where the previous page ended. On PostgreSQL the action is indexed under the C collation, so that an event
 * prefix (`client.`) is a byte range whatever the database's locale; the entity declares that
 * index with `synchronize: false`. The other DDL is TypeORM's schema builder's.
 */
export class AuditEventFilters1767100700000 implements MigrationInterface {
  name = 'AuditEventFilters1767100700000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const postgres = queryRunner.connection.driver.options.type === 'postgres';
    await queryRunner.query(postgres ? `ALTER TABLE "audit_events" ADD "ip" character varying(45)` : `ALTER TABLE "audit_events" ADD COLUMN "ip" varchar(45)`);
    await queryRunner.query(`CREATE INDEX "IDX_audit_events_at_id" ON "audit_events" ("at", "id")`);
    await queryRunner.query(`CREATE INDEX "IDX_audit_events_actor_at" ON "audit_events" ("actor", "at", "id")`);
    await queryRunner.query(`CREATE INDEX "IDX_audit_events_subject_at" ON "audit_events" ("subject", "at", "id")`);
    await queryRunner.query(`CREATE INDEX "IDX_audit_events_action_at" ON "audit_events" (${postgres ? '"action" COLLATE "C"' : '"action"'}, "at", "id")`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "IDX_audit_events_action_at"`);
    await queryRunner.query(`DROP INDEX "IDX_audit_events_subject_at"`);
    await queryRunner.query(`DROP INDEX "IDX_audit_events_actor_at"`);
    await queryRunner.query(`DROP INDEX "IDX_audit_events_at_id"`);
    await queryRunner.query(`ALTER TABLE "audit_events" DROP COLUMN "ip"`);
  }
}
