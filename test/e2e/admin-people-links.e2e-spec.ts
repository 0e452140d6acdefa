/**
 * Issue 48: a person's links to upstream identity providers (users:link, users:unlink) and the
 * address verification (users:verify-email) through the admin API, by the services the CLI calls.
 * Every route is refused without a token, with a token lacking the scope, for a person without a
 * role and for one whose role was removed, the tables unchanged; linking an administrator is an
 * owner's alone (whoever holds the upstream identity signs in as them); a link made here is the one
 * sign-in resolves; the CLI and the API leave the same audit events; the verification arrives at a
 * real SMTP server and its link is never returned; malformed input is a 4xx with `error`.
 */
import { randomUUID } from 'node:crypto';
import { AdminRolesService } from '../../src/admin/admin-roles.service.js';
import { IdentityProvidersService } from '../../src/identity-providers/identity-providers.service.js';
import { UpstreamAccounts } from '../../src/identity-providers/upstream-accounts.service.js';
import { UsersService } from '../../src/users/users.service.js';
import { AdminApi, tableSnapshot, type AdminResponse } from '../helpers/admin-api.js';
import { adminCallers, expectDescribedAs, type AdminCallers } from '../helpers/admin-system-api.js';
import { runCli } from '../helpers/cli.js';
import { linkIn, SmtpSink } from '../helpers/smtp-sink.js';
import { TestApp } from '../helpers/test-app.js';
import { Browser } from '../helpers/browser.js';

const TABLES = ['users', 'upstream_links', 'audit_events', 'email_links', 'admin_roles'];
const MAIL_ENV = { SMTP_TLS: 'none', MAIL_SERVICE_NAME: 'Latchkey Test' };
const ISSUER = 'http://localhost:3000';
/** Nothing listens there: the provider is only stored, never reached. */
const UPSTREAM = 'http://127.0.0.1:9/contoso';
/** An Auth0-style subject: the path's segment must carry "|" and "/" URL-encoded. */
const ODD_SUBJECT = 'auth0|5f/7c 9e';

type Row = Record<string, unknown>;

/** A person with an address, by id; `role` makes them an administrator. */
async function personIn(app: TestApp, role?: 'auditor' | 'owner'): Promise<{ id: string; username: string; email: string }> {
  const username = `p_${randomUUID().slice(0, 8)}`;
  const email = `${username}@example.org`;
  const users = app.app.get(UsersService);
  await users.create(username, 'correct horse battery staple', { email });
  const id = (await users.require(username)).id;
  if (role) await app.app.get(AdminRolesService).grant(id, role, 'cli');
  return { id, username, email };
}

describe('admin API: upstream links and address verification', () => {
  let smtp: SmtpSink;
  let app: TestApp;
  let admin: AdminApi;
  let callers: AdminCallers;

  beforeAll(async () => {
    smtp = await SmtpSink.start();
    app = await TestApp.start({ ...MAIL_ENV, SMTP_URL: smtp.url });
    admin = await AdminApi.setUp(app);
    callers = await adminCallers(admin);
    const providers = app.app.get(IdentityProvidersService);
    // No just-in-time accounts: an identity nobody is linked to signs nobody in.
    for (const id of ['contoso', 'fabrikam']) await providers.create({ id, protocol: 'oidc', settings: { issuer: UPSTREAM, clientId: 'latchkey', createAccounts: false } }, 'cli');
  }, 60_000);
  afterAll(async () => {
    await app?.stop();
    await smtp?.stop();
    for (const name of [...Object.keys(MAIL_ENV), 'SMTP_URL']) delete process.env[name];
  });

  const person = (role?: 'auditor' | 'owner') => personIn(app, role);
  const linkPath = (id: string, idp: string, subject: string) => `/people/${id}/upstream-links/${encodeURIComponent(idp)}/${encodeURIComponent(subject)}`;
  /** Whom sign-in through `idp` with `subject` resolves to (UpstreamAccounts, as the federation callback asks it), or null. */
  const signsIn = async (idp: string, subject: string): Promise<string | null> => {
    const provider = await app.app.get(IdentityProvidersService).findEnabled(idp);
    return (await app.app.get(UpstreamAccounts).personFor(provider!, subject, {}))?.user.id ?? null;
  };
  const auditOf = async (userId: string) =>
    ((await app.dataSource.query(`SELECT "actor", "ip", "action", "details" FROM "audit_events" WHERE "subject" = 'user:${userId}' ORDER BY "id"`)) as Row[]).map((e) => ({
      actor: e.actor,
      ip: e.ip ?? null,
      action: e.action,
      details: typeof e.details === 'string' ? (JSON.parse(e.details) as unknown) : e.details,
    }));

  it('refuses every route without a token (401), with a token lacking the scope, for a person without a role and one whose role was removed (403); nothing changes, nothing is sent', async () => {
    const target = await person();
    await app.app.get(UpstreamAccounts).link('contoso', 'kept', (await app.app.get(UsersService).findById(target.id))!, 'admin', 'test');
    const service = await admin.serviceToken('admin:read');
    const routes: [string, string, unknown, string[]][] = [
      // A read needs admin:read, admin:people or admin:owner: a client administrator has none.
      ['GET', `/people/${target.id}/upstream-links`, undefined, ['clientAdmin', 'nobody', 'demoted']],
      ['POST', `/people/${target.id}/upstream-links`, { identity_provider: 'contoso', subject: 'intruder' }, ['auditor', 'service', 'clientAdmin', 'nobody', 'demoted']],
      ['DELETE', linkPath(target.id, 'contoso', 'kept'), undefined, ['auditor', 'service', 'clientAdmin', 'nobody', 'demoted']],
      ['POST', `/people/${target.id}/email-verification`, undefined, ['auditor', 'service', 'clientAdmin', 'nobody', 'demoted']],
    ];
    const tokens: Record<string, string> = { auditor: callers.auditor, service: service.token, clientAdmin: callers.clientAdmin, nobody: callers.nobody, demoted: callers.demoted };
    const before = await tableSnapshot(app.dataSource, TABLES);
    for (const [method, path, body, refusedTo] of routes) {
      const anonymous = await admin.request(method, path, undefined, body);
      expect([method, path, anonymous.status, anonymous.headers.get('www-authenticate')?.startsWith('Bearer')]).toEqual([method, path, 401, true]);
      for (const who of refusedTo) {
        const refused = await admin.request(method, path, tokens[who], body);
        expect([method, path, who, refused.status, refused.body.error]).toEqual([method, path, who, 403, 'insufficient_scope']);
      }
    }
    expect(await tableSnapshot(app.dataSource, TABLES)).toBe(before);
    expect(await signsIn('contoso', 'intruder')).toBeNull();
    expect(smtp.to(target.email)).toHaveLength(0);
  });

  it('describes each route with the scopes its @AdminRoute permits', async () => {
    await expectDescribedAs(admin, 'GET', '/people/{id}/upstream-links', 'people', 'read');
    await expectDescribedAs(admin, 'POST', '/people/{id}/upstream-links', 'people', 'write');
    await expectDescribedAs(admin, 'DELETE', '/people/{id}/upstream-links/{idp}/{subject}', 'people', 'write');
    await expectDescribedAs(admin, 'POST', '/people/{id}/email-verification', 'people', 'write');
  });

  it('a help desk links an upstream identity (a subject with "|" and "/"), and sign-in through it finds the person; the auditor lists it; unlinking ends that; audited with who and from where', async () => {
    const helpdesk = await admin.signIn(['helpdesk']);
    const target = await person();
    expect(await signsIn('contoso', ODD_SUBJECT)).toBeNull();

    const linked = await admin.request('POST', `/people/${target.id}/upstream-links`, helpdesk.token, { identity_provider: 'contoso', subject: ODD_SUBJECT });
    expect([linked.status, linked.body]).toEqual([201, { idp: 'contoso', subject: ODD_SUBJECT, origin: 'admin', created_at: expect.any(String), last_sign_in_at: null }]);
    expect(linked.headers.get('location')).toBe(`/admin/api/v1${linkPath(target.id, 'contoso', ODD_SUBJECT)}`);
    expect(await signsIn('contoso', ODD_SUBJECT)).toBe(target.id);
    // The same identity at another provider is another identity.
    expect(await signsIn('fabrikam', ODD_SUBJECT)).toBeNull();
    const again = await admin.request('POST', `/people/${target.id}/upstream-links`, helpdesk.token, { identity_provider: 'contoso', subject: ODD_SUBJECT });
    expect([again.status, again.body]).toEqual([200, linked.body]);

    const listed = await admin.request('GET', `/people/${target.id}/upstream-links`, callers.auditor);
    expect([listed.status, listed.body]).toEqual([200, { items: [linked.body] }]);

    expect((await admin.request('DELETE', linkPath(target.id, 'contoso', ODD_SUBJECT), helpdesk.token)).status).toBe(204);
    expect(await signsIn('contoso', ODD_SUBJECT)).toBeNull();
    const twice = await admin.request('DELETE', linkPath(target.id, 'contoso', ODD_SUBJECT), helpdesk.token);
    expect([twice.status, twice.body.error]).toEqual([404, 'not_found']);
    expect((await admin.request('GET', `/people/${target.id}/upstream-links`, helpdesk.token)).body).toEqual({ items: [] });

    expect(await auditOf(target.id)).toEqual([
      { actor: `user:${helpdesk.userId}`, ip: '127.0.0.1', action: 'user.upstream_linked', details: { idp: 'contoso', origin: 'admin' } },
      { actor: `user:${helpdesk.userId}`, ip: '127.0.0.1', action: 'user.upstream_unlinked', details: { idp: 'contoso' } },
    ]);
  });

  it('the help desk cannot link, unlink or send a verification to an administrator (403 forbidden, nothing changed); an owner can', async () => {
    const helpdesk = await admin.signIn(['helpdesk']);
    const administrator = await person('auditor');
    await app.app.get(UpstreamAccounts).link('fabrikam', 'theirs', (await app.app.get(UsersService).findById(administrator.id))!, 'admin', 'test');
    const before = await tableSnapshot(app.dataSource, TABLES);
    const attempts: [string, string, unknown?][] = [
      ['POST', `/people/${administrator.id}/upstream-links`, { identity_provider: 'contoso', subject: 'helpdesk-owned' }],
      ['DELETE', linkPath(administrator.id, 'fabrikam', 'theirs')],
      ['POST', `/people/${administrator.id}/email-verification`],
    ];
    for (const [method, path, body] of attempts) {
      const refused = await admin.request(method, path, helpdesk.token, body);
      expect([method, path, refused.status, refused.body.error, refused.body.error_description]).toEqual([method, path, 403, 'forbidden', expect.stringMatching(/is an administrator \(auditor\): only an owner may/)]);
    }
    expect(await tableSnapshot(app.dataSource, TABLES)).toBe(before);
    expect(await signsIn('contoso', 'helpdesk-owned')).toBeNull();
    expect(smtp.to(administrator.email)).toHaveLength(0);

    expect((await admin.request('POST', `/people/${administrator.id}/upstream-links`, callers.owner, { identity_provider: 'contoso', subject: 'owner-made' })).status).toBe(201);
    expect(await signsIn('contoso', 'owner-made')).toBe(administrator.id);
    expect((await admin.request('DELETE', linkPath(administrator.id, 'fabrikam', 'theirs'), callers.owner)).status).toBe(204);
    expect((await admin.request('POST', `/people/${administrator.id}/email-verification`, callers.owner)).status).toBe(202);
    await smtp.waitFor(administrator.email);
  });

  it('refuses an identity linked to someone else (409), an unknown person, provider or link (404), and malformed bodies (400), each with `error`; nothing changes', async () => {
    const target = await person();
    const other = await person();
    await app.app.get(UpstreamAccounts).link('contoso', 'others', (await app.app.get(UsersService).findById(other.id))!, 'admin', 'test');
    const link = `/people/${target.id}/upstream-links`;
    const before = await tableSnapshot(app.dataSource, TABLES);
    const cases: [string, string, unknown, number, string][] = [
      ['POST', link, { identity_provider: 'contoso', subject: 'others' }, 409, 'conflict'],
      ['POST', `/people/${randomUUID()}/upstream-links`, { identity_provider: 'contoso', subject: 'x' }, 404, 'not_found'],
      ['POST', '/people/not-a-uuid/upstream-links', { identity_provider: 'contoso', subject: 'x' }, 404, 'not_found'],
      ['POST', link, { identity_provider: 'nope', subject: 'x' }, 404, 'not_found'],
      ['GET', `/people/${randomUUID()}/upstream-links`, undefined, 404, 'not_found'],
      ['DELETE', linkPath(target.id, 'contoso', 'others'), undefined, 404, 'not_found'],
      ['DELETE', linkPath(target.id, 'nope', 'x'), undefined, 404, 'not_found'],
      ['DELETE', linkPath(randomUUID(), 'contoso', 'others'), undefined, 404, 'not_found'],
      ['POST', `/people/${randomUUID()}/email-verification`, undefined, 404, 'not_found'],
      ['POST', link, {}, 400, 'invalid_request'],
      ['POST', link, { identity_provider: 'contoso' }, 400, 'invalid_request'],
      ['POST', link, { subject: 'x' }, 400, 'invalid_request'],
      ['POST', link, { identity_provider: 'contoso', subject: '' }, 400, 'invalid_request'],
      ['POST', link, { identity_provider: 'contoso', subject: 42 }, 400, 'invalid_request'],
      ['POST', link, { identity_provider: ['contoso'], subject: 'x' }, 400, 'invalid_request'],
      ['POST', link, { identity_provider: 'contoso', subject: 'x'.repeat(256) }, 400, 'invalid_request'],
      ['POST', link, { idp: 'contoso', subject: 'x' }, 400, 'invalid_request'],
      ['POST', link, { identity_provider: 'contoso', subject: 'x', origin: 'created' }, 400, 'invalid_request'],
      ['POST', link, '[1, 2]', 400, 'invalid_request'],
      ['POST', link, '{"identity_provider": "contoso"', 400, 'invalid_request'],
    ];
    for (const [method, path, body, status, error] of cases) {
      const response: AdminResponse = await admin.request(method, path, callers.owner, body);
      expect([method, path, body, response.status, response.body.error, typeof response.body.error_description]).toEqual([method, path, body, status, error, 'string']);
    }
    const plain = await admin.request('POST', link, callers.owner, 'identity_provider=contoso', 'text/plain');
    expect([plain.status, typeof plain.body.error]).toEqual([415, 'string']);
    expect(await tableSnapshot(app.dataSource, TABLES)).toBe(before);
    expect(await signsIn('contoso', 'others')).toBe(other.id);
  });

  it('emails a verification link as users:verify-email does (202), never returning it; the link verifies the address; 409 for a person without one', async () => {
    const helpdesk = await admin.signIn(['helpdesk']);
    const target = await person();
    const sent = await admin.request('POST', `/people/${target.id}/email-verification`, helpdesk.token);
    expect([sent.status, sent.body]).toEqual([202, { email: target.email, expires_at: expect.any(String) }]);
    const mail = await smtp.waitFor(target.email);
    const link = linkIn(mail, ISSUER, '/email/verify?token=');
    expect(JSON.stringify(sent.body)).not.toContain(new URL(link, ISSUER).searchParams.get('token'));
    const browser = new Browser(app.baseUrl);
    expect((await browser.submit(await browser.get(link), '/email/verify')).status).toBe(200);
    expect((await app.app.get(UsersService).findById(target.id))?.emailVerified).toBe(true);
    expect((await auditOf(target.id)).filter((e) => e.action === 'email.verification_sent')).toEqual([{ actor: `user:${helpdesk.userId}`, ip: '127.0.0.1', action: 'email.verification_sent', details: { sent: true, printed: false } }]);

    const username = `noaddr_${randomUUID().slice(0, 6)}`;
    await app.app.get(UsersService).create(username, 'correct horse battery staple');
    const withoutAddress = (await app.app.get(UsersService).require(username)).id;
    const before = await tableSnapshot(app.dataSource, TABLES);
    const refused = await admin.request('POST', `/people/${withoutAddress}/email-verification`, helpdesk.token);
    expect([refused.status, refused.body.error, refused.body.error_description]).toEqual([409, 'conflict', expect.stringMatching(/no email address/)]);
    expect(await tableSnapshot(app.dataSource, TABLES)).toBe(before);
  });

  it('the CLI and the API leave the same audit events for link, unlink and verify-email: the CLI as `cli`, the API as the administrator with their address', async () => {
    const owner = await admin.signIn(['owner']);
    const viaCli = await person();
    const viaApi = await person();
    const cli = async (...args: string[]) => {
      const result = await runCli(args);
      expect({ args, code: result.code, stderr: result.stderr }).toEqual({ args, code: 0, stderr: '' });
      return JSON.parse(result.stdout) as Row;
    };
    expect(await cli('users:link', '--username', viaCli.username, '--idp', 'contoso', '--subject', `cli|${viaCli.id}`)).toEqual({
      username: viaCli.username,
      upstream_links: [{ idp: 'contoso', subject: `cli|${viaCli.id}`, origin: 'admin', created_at: expect.any(String), last_sign_in_at: null }],
    });
    expect(await signsIn('contoso', `cli|${viaCli.id}`)).toBe(viaCli.id);
    await cli('users:unlink', '--username', viaCli.username, '--idp', 'contoso', '--subject', `cli|${viaCli.id}`);
    await cli('users:verify-email', '--username', viaCli.username);
    await smtp.waitFor(viaCli.email);
    const missing = await runCli(['users:unlink', '--username', viaCli.username, '--idp', 'contoso', '--subject', `cli|${viaCli.id}`]);
    expect([missing.code, missing.stderr.trim()]).toEqual([1, `latchkey: ${viaCli.username} has no such link to contoso`]);

    expect((await admin.request('POST', `/people/${viaApi.id}/upstream-links`, owner.token, { identity_provider: 'contoso', subject: `api|${viaApi.id}` })).status).toBe(201);
    expect((await admin.request('DELETE', linkPath(viaApi.id, 'contoso', `api|${viaApi.id}`), owner.token)).status).toBe(204);
    expect((await admin.request('POST', `/people/${viaApi.id}/email-verification`, owner.token)).status).toBe(202);
    await smtp.waitFor(viaApi.email);

    const fromCli = await auditOf(viaCli.id);
    const fromApi = await auditOf(viaApi.id);
    expect(fromCli.map((e) => [e.action, e.details])).toEqual(fromApi.map((e) => [e.action, e.details]));
    expect(fromCli.map((e) => e.action)).toEqual(['user.upstream_linked', 'user.upstream_unlinked', 'email.verification_sent']);
    expect(fromCli.every((e) => e.actor === 'cli' && e.ip === null)).toBe(true);
    expect(fromApi.every((e) => e.actor === `user:${owner.userId}` && e.ip === '127.0.0.1')).toBe(true);
  }, 120_000);
});

describe('admin API: address verification without email set up', () => {
  let app: TestApp;
  let admin: AdminApi;

  beforeAll(async () => {
    delete process.env.SMTP_URL;
    app = await TestApp.start();
    admin = await AdminApi.setUp(app);
  }, 60_000);
  afterAll(() => app?.stop());

  it('says email is not set up (409), naming the CLI command that prints a link instead; nothing changes', async () => {
    const owner = await admin.signIn(['owner']);
    const target = await personIn(app);
    const before = await tableSnapshot(app.dataSource, TABLES);
    const refused = await admin.request('POST', `/people/${target.id}/email-verification`, owner.token);
    expect([refused.status, refused.body.error, refused.body.error_description]).toEqual([409, 'conflict', expect.stringMatching(/^Email is not set up on this server \(SMTP_URL\); the CLI's users:verify-email --print-link/)]);
    expect(await tableSnapshot(app.dataSource, TABLES)).toBe(before);
  });
});
