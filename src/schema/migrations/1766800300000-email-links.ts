import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue 46 (mail): the single-use links sent by email (invitations, address verification and
 * change, forgotten passwords, self-registration), by the SHA-256 of their secret. DDL generated
 * by TypeORM's schema builder; on SQLite the foreign key is declared in the table.
 */
export class EmailLinks1766800300000 implements MigrationInterface {
  name = 'EmailLinks1766800300000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const postgres = queryRunner.connection.driver.options.type === 'postgres';
    const statements = postgres
      ? [
          `CREATE TABLE "email_links" ("id" uuid NOT NULL, "purpose" character varying(20) NOT NULL, "user_id" uuid, "email" character varying(254) NOT NULL, "token_hash" character varying(64) NOT NULL, "expires_at" TIMESTAMP WITH TIME ZONE NOT NULL, "used_at" TIMESTAMP WITH TIME ZONE, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_1f3c70dc8e6738f8b4c45db9745" PRIMARY KEY ("id"))`,
          `CREATE UNIQUE INDEX "IDX_d2e0b5088af994b090c4f21d9f" ON "email_links" ("token_hash")`,
          `CREATE INDEX "IDX_c8b37021c4de9683b3ec49c18e" ON "email_links" ("expires_at")`,
          `ALTER TABLE "email_links" ADD CONSTRAINT "FK_26129e1ad4b685a151100233d4f" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
        ]
      : [
          `CREATE TABLE "email_links" ("id" varchar(36) PRIMARY KEY NOT NULL, "purpose" varchar(20) NOT NULL, "user_id" varchar(36), "email" varchar(254) NOT NULL, "token_hash" varchar(64) NOT NULL, "expires_at" datetime NOT NULL, "used_at" datetime, "created_at" datetime NOT NULL DEFAULT (datetime('now')), CONSTRAINT "FK_26129e1ad4b685a151100233d4f" FOREIGN KEY ("user_id") REFERENCES "users" ("id") ON DELETE CASCADE ON UPDATE NO ACTION)`,
          `CREATE UNIQUE INDEX "IDX_d2e0b5088af994b090c4f21d9f" ON "email_links" ("token_hash")`,
          `CREATE INDEX "IDX_c8b37021c4de9683b3ec49c18e" ON "email_links" ("expires_at")`,
        ];
    for (const statement of statements) await queryRunner.query(statement);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "email_links"`);
  }
}
