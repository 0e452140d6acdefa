import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue #32: PostgreSQL tells every instance when a client changes, so that instances may keep
 * client rows in memory (src/clients/client-cache.ts). A trigger, not the application, sends the
 * notification, so that every writer is covered: this app, the CLI, an administrator's SQL. It is
 * sent when the change commits (NOTIFY is transactional), with the client's id; a TRUNCATE sends
 * '*'. SQLite has no LISTEN/NOTIFY and no cache: nothing to do there.
 */
export class ClientChangeNotifications1765000000000 implements MigrationInterface {
  name = 'ClientChangeNotifications1765000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    if (queryRunner.connection.driver.options.type !== 'postgres') return;
    await queryRunner.query(`CREATE OR REPLACE FUNCTION "latchkey_clients_changed"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'TRUNCATE' THEN
    PERFORM pg_notify('latchkey_clients', '*');
  ELSIF TG_OP = 'DELETE' THEN
    PERFORM pg_notify('latchkey_clients', OLD."id");
  ELSE
    PERFORM pg_notify('latchkey_clients', NEW."id");
  END IF;
  RETURN NULL;
END
$$`);
    await queryRunner.query(`CREATE TRIGGER "clients_changed" AFTER INSERT OR UPDATE OR DELETE ON "clients" FOR EACH ROW EXECUTE FUNCTION "latchkey_clients_changed"()`);
    await queryRunner.query(`CREATE TRIGGER "clients_truncated" AFTER TRUNCATE ON "clients" FOR EACH STATEMENT EXECUTE FUNCTION "latchkey_clients_changed"()`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    if (queryRunner.connection.driver.options.type !== 'postgres') return;
    await queryRunner.query(`DROP TRIGGER IF EXISTS "clients_truncated" ON "clients"`);
    await queryRunner.query(`DROP TRIGGER IF EXISTS "clients_changed" ON "clients"`);
    await queryRunner.query(`DROP FUNCTION IF EXISTS "latchkey_clients_changed"()`);
  }
}
