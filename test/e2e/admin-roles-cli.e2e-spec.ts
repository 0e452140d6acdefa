/**
 * Issue 48: `users:roles`, where the first owner is made (on the server, before anyone can use the
 * admin API). JSON on stdout, one clear line on stderr, audited as the admin API's role changes are.
 */
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { getDataSourceToken } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { UsersService } from '../../src/users/users.service.js';
import { startAtIssuer } from '../helpers/app-at-issuer.js';
import { runCli } from '../helpers/cli.js';
import { dropTestDatabase } from '../helpers/test-database.js';

describe('users:roles (administrator roles through the CLI)', () => {
  let nest: NestFastifyApplication;
  let db: DataSource;
  let aliceId: string;

  beforeAll(async () => {
    ({ nest } = await startAtIssuer());
    db = nest.get<DataSource>(getDataSourceToken());
    aliceId = (await nest.get(UsersService).create('alice', 'correct horse battery staple')).id;
  }, 60_000);

  afterAll(async () => {
    await nest.close();
    await dropTestDatabase();
  });

  it('shows, grants and revokes roles, printing the roles held; each change audited by cli', async () => {
    const shown = await runCli(['users:roles', '--username', 'alice']);
    expect({ code: shown.code, stderr: shown.stderr, out: JSON.parse(shown.stdout) }).toEqual({ code: 0, stderr: '', out: { username: 'alice', roles: [] } });
    const granted = await runCli(['users:roles', '--username', 'alice', '--grant', 'owner', '--grant', 'auditor']);
    expect(JSON.parse(granted.stdout)).toEqual({ username: 'alice', roles: ['auditor', 'owner'] });
    // The CLI may remove the last owner: its operator can always grant it again from the server.
    const revoked = await runCli(['users:roles', '--username', 'alice', '--revoke', 'owner']);
    expect(JSON.parse(revoked.stdout)).toEqual({ username: 'alice', roles: ['auditor'] });
    const events = (await db.query(`SELECT "actor", "action", "subject", "details" FROM "audit_events" WHERE "action" LIKE 'admin_role.%' ORDER BY "id"`)) as { actor: string; action: string; subject: string; details: string }[];
    expect(events.map((e) => [e.actor, e.action, e.subject, JSON.parse(e.details)])).toEqual([
      ['cli', 'admin_role.granted', `user:${aliceId}`, { role: 'owner' }],
      ['cli', 'admin_role.granted', `user:${aliceId}`, { role: 'auditor' }],
      ['cli', 'admin_role.revoked', `user:${aliceId}`, { role: 'owner' }],
    ]);
  }, 120_000);

  it('refuses an unknown role, an unknown person and a contradiction with one line on stderr and exit 1 (the usage line after it); nothing changes', async () => {
    const before = JSON.stringify(await db.query(`SELECT * FROM "admin_roles"`));
    for (const [args, message] of [
      [['--username', 'alice', '--grant', 'root'], /Unknown administrator role "root"; the roles are auditor, helpdesk, client-admin, owner/],
      [['--username', 'nobody', '--grant', 'owner'], /No user named "nobody"/],
      [['--username', 'alice', '--grant', 'owner', '--revoke', 'owner'], /--grant and --revoke both name owner/],
    ] as const) {
      const result = await runCli(['users:roles', ...args]);
      expect(result.code).toBe(1);
      expect(result.stdout).toBe('');
      expect(result.stderr.split('\n')[0]).toMatch(message);
    }
    expect(JSON.stringify(await db.query(`SELECT * FROM "admin_roles"`))).toBe(before);
  }, 120_000);
});
