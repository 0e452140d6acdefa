import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue 46 (provisioning): scim_users, what a directory says about a person beyond our own
 * attributes (externalId, the enterprise extension, the other SCIM User attributes). DDL generated
 * by TypeORM's schema builder; on SQLite the foreign keys are declared in the table.
 */
export class Provisioning1766800200000 implements MigrationInterface {
  name = 'Provisioning1766800200000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const postgres = queryRunner.connection.driver.options.type === 'postgres';
    const statements = postgres
      ? [
          `CREATE TABLE "scim_users" ("user_id" uuid NOT NULL, "external_id" character varying(255), "employee_number" character varying(100), "department" character varying(200), "manager_id" uuid, "attributes" jsonb NOT NULL, CONSTRAINT "PK_c3073abd55c09b51fb5873ef040" PRIMARY KEY ("user_id"))`,
          `CREATE INDEX "IDX_6372ff33eff3ae7131bb27c084" ON "scim_users" ("external_id") `,
          `CREATE INDEX "IDX_3df2bf5b9a3495c2fcee3b7133" ON "scim_users" ("manager_id") `,
          `ALTER TABLE "scim_users" ADD CONSTRAINT "FK_c3073abd55c09b51fb5873ef040" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
          `ALTER TABLE "scim_users" ADD CONSTRAINT "FK_3df2bf5b9a3495c2fcee3b7133c" FOREIGN KEY ("manager_id") REFERENCES "users"("id") ON DELETE SET NULL ON UPDATE NO ACTION`,
        ]
      : [
          `CREATE TABLE "scim_users" ("user_id" varchar(36) PRIMARY KEY NOT NULL, "external_id" varchar(255), "employee_number" varchar(100), "department" varchar(200), "manager_id" varchar(36), "attributes" text NOT NULL, CONSTRAINT "FK_c3073abd55c09b51fb5873ef040" FOREIGN KEY ("user_id") REFERENCES "users" ("id") ON DELETE CASCADE ON UPDATE NO ACTION, CONSTRAINT "FK_3df2bf5b9a3495c2fcee3b7133c" FOREIGN KEY ("manager_id") REFERENCES "users" ("id") ON DELETE SET NULL ON UPDATE NO ACTION)`,
          `CREATE INDEX "IDX_6372ff33eff3ae7131bb27c084" ON "scim_users" ("external_id") `,
          `CREATE INDEX "IDX_3df2bf5b9a3495c2fcee3b7133" ON "scim_users" ("manager_id") `,
        ];
    for (const statement of statements) await queryRunner.query(statement);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "scim_users"`);
  }
}
