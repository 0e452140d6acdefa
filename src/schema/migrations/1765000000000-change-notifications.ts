import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue #32: PostgreSQL tells every instance when a client or a live access token changes, so that
 * instances may keep those rows in memory (src/database/notified-cache.ts). Triggers, not the
 * application, send the notifications, so that every writer is covered: this app, the CLI, an
 * administrator's SQL. NOTIFY is transactional: it is delivered when the change commits.
 * - `latchkey_clients`, with the client's id, on any INSERT, UPDATE or DELETE of a client.
 * - `latchkey_tokens`, with the token's hash, on any UPDATE of an access token (a revocation) and
 *   the DELETE of one not yet expired (a client or person deleted); refresh tokens are not kept,
 *   and the purge of expired rows stays silent.
 * A TRUNCATE of either table sends '*'. SQLite has no LISTEN/NOTIFY and no cache: nothing to do there.
 */
export class ChangeNotifications1765000000000 implements MigrationInterface {
  name = 'ChangeNotifications1765000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    if (queryRunner.connection.driver.options.type !== 'postgres') return;
    for (const [table, key] of [['clients', 'id'], ['tokens', 'token_hash']]) {
      await queryRunner.query(`CREATE OR REPLACE FUNCTION "latchkey_${table}_changed"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'TRUNCATE' THEN
    PERFORM pg_notify('latchkey_${table}', '*');
  ELSIF TG_OP = 'DELETE' OR TG_OP = 'UPDATE' THEN
    PERFORM pg_notify('latchkey_${table}', OLD."${key}");
  ELSE
    PERFORM pg_notify('latchkey_${table}', NEW."${key}");
  END IF;
  RETURN NULL;
END
$$`);
      await queryRunner.query(`CREATE TRIGGER "${table}_truncated" AFTER TRUNCATE ON "${table}" FOR EACH STATEMENT EXECUTE FUNCTION "latchkey_${table}_changed"()`);
    }
    await queryRunner.query(`CREATE TRIGGER "clients_changed" AFTER INSERT OR UPDATE OR DELETE ON "clients" FOR EACH ROW EXECUTE FUNCTION "latchkey_clients_changed"()`);
    await queryRunner.query(`CREATE TRIGGER "tokens_changed" AFTER UPDATE ON "tokens" FOR EACH ROW WHEN (OLD."kind" = 'access') EXECUTE FUNCTION "latchkey_tokens_changed"()`);
    await queryRunner.query(
      `CREATE TRIGGER "tokens_deleted" AFTER DELETE ON "tokens" FOR EACH ROW WHEN (OLD."kind" = 'access' AND OLD."revoked_at" IS NULL AND OLD."expires_at" > now()) EXECUTE FUNCTION "latchkey_tokens_changed"()`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    if (queryRunner.connection.driver.options.type !== 'postgres') return;
    for (const trigger of ['tokens_deleted', 'tokens_changed', 'tokens_truncated']) await queryRunner.query(`DROP TRIGGER IF EXISTS "${trigger}" ON "tokens"`);
    for (const trigger of ['clients_changed', 'clients_truncated']) await queryRunner.query(`DROP TRIGGER IF EXISTS "${trigger}" ON "clients"`);
    for (const table of ['tokens', 'clients']) await queryRunner.query(`DROP FUNCTION IF EXISTS "latchkey_${table}_changed"()`);
  }
}
