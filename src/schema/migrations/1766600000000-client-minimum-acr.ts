import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The levels in order, weakest first (common/authentication-context.ts, as of this migration). */
const LEVELS = ['urn:latchkey:acr:pwd', 'urn:latchkey:acr:mfa', 'urn:latchkey:acr:phr'];

/**
 * Issue 43, finding 1: a client's floor of the sign-in level (minimum_acr), which a request's
 * acr_values may raise but never lower, apart from default_acr_values (OpenID Connect Dynamic
 * Registration §2), which a request replaces.
 *
 * Until now `clients:create --require-mfa` registered default_acr_values, and the README promised
 * it required a second factor "of everyone using a client". Clients registered before keep that
 * promise: those whose default_acr_values name only mfa or phr get the weakest of them as their
 * floor (any of them answered, Core §3.1.2.1). A list naming pwd too asked for no more than a
 * password, so it gets none. The settings are JSON text on both dialects, so they are read here.
 */
export class ClientMinimumAcr1766600000000 implements MigrationInterface {
  name = 'ClientMinimumAcr1766600000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const postgres = queryRunner.connection.driver.options.type === 'postgres';
    await queryRunner.query(postgres ? `ALTER TABLE "clients" ADD "minimum_acr" character varying(64)` : `ALTER TABLE "clients" ADD COLUMN "minimum_acr" varchar(64)`);
    const rows = (await queryRunner.query(`SELECT "id", "openid_settings" FROM "clients" WHERE "openid_settings" IS NOT NULL`)) as { id: string; openid_settings: string }[];
    const update = `UPDATE "clients" SET "minimum_acr" = ${postgres ? '$1' : '?'} WHERE "id" = ${postgres ? '$2' : '?'}`;
    for (const row of rows) {
      const floor = floorOf(row.openid_settings);
      if (floor !== undefined) await queryRunner.query(update, [floor, row.id]);
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "clients" DROP COLUMN "minimum_acr"`);
  }
}

/** The weakest level a stored default_acr_values names, when it is above a password. */
function floorOf(settings: string): string | undefined {
  let defaults: unknown;
  try {
    defaults = (JSON.parse(settings) as { defaultAcrValues?: unknown }).defaultAcrValues;
  } catch {
    return undefined;
  }
  if (!Array.isArray(defaults)) return undefined;
  const weakest = LEVELS.find((level) => defaults.includes(level));
  return weakest === undefined || weakest === LEVELS[0] ? undefined : weakest;
}
