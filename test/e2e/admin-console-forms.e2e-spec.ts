/**
 * Issue 48, the admin console's people and client forms: adding a person (and inviting them),
 * editing a profile, a person's administrator roles (an owner's), their upstream links and the
 * verification email, editing a client's registration. Each form renders for the owner and its
 * round trip changes the database through the admin API; the API's refusal of what was typed is
 * shown beside the field with a 4xx; a role that may not is refused (the 403 page) and nothing
 * changes; a form without the session's CSRF token is refused. The real app at its issuer, with a
 * real SMTP server for the emails. The console's own rules: admin-console.e2e-spec.ts.
 */
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { DataSource } from 'typeorm';
import { ClientsService } from '../../src/clients/clients.service.js';
import { IdentityProvidersService } from '../../src/identity-providers/identity-providers.service.js';
import { UsersService } from '../../src/users/users.service.js';
import { tableSnapshot } from '../helpers/admin-api.js';
import { consoleCsrf, consolePerson, fieldProblemOn, headingOf, signInWithNewBrowser, startConsoleApp, stopConsoleApp, type ConsolePerson } from '../helpers/admin-console.js';
import type { Page } from '../helpers/browser.js';
import { MovableClock } from '../helpers/movable-clock.js';
import { SmtpSink } from '../helpers/smtp-sink.js';

const MAIL_ENV = { SMTP_TLS: 'none', MAIL_SERVICE_NAME: 'Latchkey Test' };
const PEOPLE_TABLES = ['users', 'admin_roles', 'upstream_links', 'email_links'];
/** An Auth0-style subject: the console's paths carry "|", "/" and the space URL-encoded. */
const ODD_SUBJECT = 'auth0|5f/7c 9e';

describe('the admin console: people and client forms (issue 48)', () => {
  let smtp: SmtpSink;
  let nest: NestFastifyApplication;
  let issuer: URL;
  let db: DataSource;
  const clock = new MovableClock();

  beforeAll(async () => {
    smtp = await SmtpSink.start();
    ({ nest, issuer, db } = await startConsoleApp(clock, { ...MAIL_ENV, SMTP_URL: smtp.url }));
    await nest.get(IdentityProvidersService).create({ id: 'contoso', protocol: 'oidc', settings: { issuer: 'http://127.0.0.1:9/contoso', clientId: 'latchkey', createAccounts: false } }, 'cli');
  });
  afterAll(async () => {
    await stopConsoleApp(nest, ['SMTP_URL', ...Object.keys(MAIL_ENV)]);
    await smtp?.stop();
  });

  const signIn = async (person: ConsolePerson) => (await signInWithNewBrowser(issuer.origin, person, clock)).browser;
  /** The message shown beside a field (its id), or undefined. */
  const fieldError = (page: Page, field: string) => fieldProblemOn(page, field).message;
  const users = () => nest.get(UsersService);
  /** A person without a role; with an address when given. */
  const person = async (email?: string) => {
    const { username } = await consolePerson(nest, []);
    return email ? users().updateProfile(username, { email }) : users().require(username);
  };
  const audit = (action: string, subject: string) => db.query(`SELECT "actor", "ip" FROM "audit_events" WHERE "action" = '${action}' AND "subject" = '${subject}'`) as Promise<{ actor: string; ip: string | null }[]>;
  const rolesOf = async (userId: string) => ((await db.query(`SELECT "role" FROM "admin_roles" WHERE "user_id" = '${userId}'`)) as { role: string }[]).map((row) => row.role).sort();

  it('renders each form for the owner, with the CSRF token and the strict policy', async () => {
    const owner = await consolePerson(nest, ['owner']);
    const target = await person('target@example.org');
    const { client } = await nest.get(ClientsService).create({ name: 'Payroll', redirectUris: ['https://payroll.example/cb'], scope: 'notes:read' });
    const browser = await signIn(owner);
    const forms: [string, string, string][] = [
      ['/admin/people/new', 'Add a person', 'action="/admin/people"'],
      [`/admin/people/${target.id}/edit`, `Edit ${target.username}`, `action="/admin/people/${target.id}/edit"`],
      [`/admin/people/${target.id}/roles`, `Roles of ${target.username}`, `action="/admin/people/${target.id}/roles"`],
      [`/admin/people/${target.id}/upstream-links/new`, `Link ${target.username} to an identity`, `action="/admin/people/${target.id}/upstream-links"`],
      [`/admin/clients/${client.id}/edit`, 'Edit Payroll', `action="/admin/clients/${client.id}/edit"`],
    ];
    for (const [path, title, action] of forms) {
      const page = await browser.get(path);
      expect([path, page.status, headingOf(page)]).toEqual([path, 200, title]);
      expect(page.body).toContain(action);
      expect(consoleCsrf(page)).toMatch(/^[\w-]{43}$/);
      expect(page.headers.get('content-security-policy')).not.toContain('unsafe-inline');
      expect(page.headers.get('cache-control')).toBe('no-store');
    }
    const personPage = await browser.get(`/admin/people/${target.id}`);
    for (const link of ['/edit"', '/roles"', '/upstream-links/new"', '/email-verification"']) expect(personPage.body).toContain(`/admin/people/${target.id}${link}`);
    expect((await browser.get('/admin/people')).body).toContain('href="/admin/people/new"');
    expect((await browser.get(`/admin/clients/${client.id}`)).body).toContain(`href="/admin/clients/${client.id}/edit"`);
  });

  it('adds a person and emails them an invitation; a taken username and a bad address are shown beside their fields (4xx), adding nobody', async () => {
    const owner = await consolePerson(nest, ['owner']);
    const browser = await signIn(owner);
    const form = await browser.get('/admin/people/new');
    const username = `new_${Date.now().toString(36)}`;
    const added = await browser.submit(form, '/admin/people', { username, name: 'Ada Lovelace', email: `${username}@example.org`, invite: 'yes' });
    expect(added.status).toBe(303);
    const user = await users().require(username);
    expect(user).toMatchObject({ name: 'Ada Lovelace', email: `${username}@example.org`, passwordHash: '' });
    expect(added.location).toBe(`/admin/people/${user.id}`);
    expect((await browser.get(added.location!)).body).toContain(`an invitation to choose a password is on its way to ${username}@example.org`);
    const mail = await smtp.waitFor(`${username}@example.org`);
    expect(mail.text).toContain('/invitation?token=');
    expect(await audit('user.created', `user:${user.id}`)).toEqual([{ actor: `user:${owner.userId}`, ip: '127.0.0.1' }]);

    const before = await tableSnapshot(db, PEOPLE_TABLES);
    const taken = await browser.submit(form, '/admin/people', { username, name: 'Someone else', email: '' });
    expect(taken.status).toBe(409);
    expect(fieldError(taken, 'username')).toBe(`A user named '${username}' already exists.`);
    expect(taken.body).toContain('class="error-summary" role="alert"');
    expect(taken.body).toContain('href="#username"');
    expect(taken.body).toMatch(/id="username"[^>]*aria-invalid="true"/);
    expect(taken.body).toContain('value="Someone else"');
    const badEmail = await browser.submit(form, '/admin/people', { username: `${username}_2`, email: 'not an address', invite: 'yes' });
    expect(badEmail.status).toBe(400);
    expect(fieldError(badEmail, 'email')).toBe('email must be an email address of at most 254 characters.');
    expect(fieldError(badEmail, 'username')).toBeUndefined();
    const noAddress = await browser.submit(form, '/admin/people', { username: `${username}_3`, invite: 'yes' });
    expect(noAddress.status).toBe(400);
    expect(fieldError(noAddress, 'email')).toMatch(/An invitation is sent by email/);
    expect(await tableSnapshot(db, PEOPLE_TABLES)).toBe(before);

    // Without the invitation: added, and told how they will sign in.
    const plain = await browser.submit(form, '/admin/people', { username: `${username}_4`, email: `${username}_4@example.org` });
    expect(plain.status).toBe(303);
    expect((await browser.get(plain.location!)).body).toContain('Send an invitation');
  });

  it("edits a person's profile as a merge patch of what changed; a bad address re-renders with the message and changes nothing", async () => {
    const owner = await consolePerson(nest, ['owner']);
    const target = await person('before@example.org');
    const browser = await signIn(owner);
    const edit = await browser.get(`/admin/people/${target.id}/edit`);
    expect(edit.body).toContain('value="before@example.org"');
    const saved = await browser.submit(edit, `/admin/people/${target.id}/edit`, { name: 'Grace Hopper', given_name: 'Grace', family_name: '', email: 'after@example.org', require_mfa: 'yes' });
    expect(saved).toMatchObject({ status: 303, location: `/admin/people/${target.id}` });
    expect((await browser.get(saved.location!)).body).toContain(`The profile of ${target.username} is saved.`);
    expect(await users().findById(target.id)).toMatchObject({ name: 'Grace Hopper', givenName: 'Grace', familyName: null, email: 'after@example.org', emailVerified: false, requireMfa: true });
    expect(await audit('user.updated', `user:${target.id}`)).toEqual([{ actor: `user:${owner.userId}`, ip: '127.0.0.1' }]);

    const before = await tableSnapshot(db, PEOPLE_TABLES);
    const same = await browser.submit(await browser.get(`/admin/people/${target.id}/edit`), `/admin/people/${target.id}/edit`, { name: 'Grace Hopper', given_name: 'Grace', family_name: '', email: 'after@example.org', require_mfa: 'yes' });
    expect((await browser.get(same.location!)).body).toContain('Nothing was changed.');
    const refused = await browser.submit(edit, `/admin/people/${target.id}/edit`, { name: 'Grace', email: 'nope@' });
    expect(refused.status).toBe(400);
    expect(fieldError(refused, 'email')).toBe('email must be an email address of at most 254 characters.');
    expect(refused.body).toContain('value="nope@"');
    expect(refused.body).toContain('<title>Error: Edit');
    expect(await tableSnapshot(db, PEOPLE_TABLES)).toBe(before);
  });

  it("lets an owner change a person's roles after a recent sign-in (linking too); a help desk sees them read-only and is refused (403), nothing changed", async () => {
    const owner = await consolePerson(nest, ['owner']);
    const target = await person();
    const browser = await signIn(owner);
    const form = await browser.get(`/admin/people/${target.id}/roles`);
    expect(form.body).not.toContain('id="reauth-note"');
    expect((await browser.submit(form, `/admin/people/${target.id}/roles`, { roles: 'helpdesk' })).status).toBe(303);
    expect(await rolesOf(target.id)).toEqual(['helpdesk']);
    const moved = await browser.submit(form, `/admin/people/${target.id}/roles`, { roles: 'auditor' });
    expect((await browser.get(moved.location!)).body).toContain(`${target.username} now holds the roles auditor.`);
    expect(await rolesOf(target.id)).toEqual(['auditor']);
    expect(await audit('admin_role.granted', `user:${target.id}`)).toHaveLength(2);

    const helpdesk = await consolePerson(nest, ['helpdesk']);
    const desk = await signIn(helpdesk);
    const page = await desk.get(`/admin/people/${target.id}`);
    expect(page.body).toContain('<dt>Administrator roles</dt><dd>auditor');
    expect(page.body).not.toContain(`/admin/people/${target.id}/roles"`);
    const readOnly = await desk.get(`/admin/people/${target.id}/roles`);
    expect(readOnly.body).toContain('Only an owner changes who is an administrator.');
    expect(readOnly.body).not.toContain(`action="/admin/people/${target.id}/roles"`);
    const before = await tableSnapshot(db, ['admin_roles', 'audit_events']);
    const refused = await desk.post(`/admin/people/${target.id}/roles`, { csrf_token: consoleCsrf(page), roles: 'owner' });
    expect(refused.status).toBe(403);
    expect(refused.body).toContain('Not allowed');
    expect(await tableSnapshot(db, ['admin_roles', 'audit_events'])).toBe(before);

    // A sign-in older than ADMIN_CONSOLE_REAUTH_SECONDS: a new one first, then back to the form; nothing changed meanwhile.
    clock.advance(301_000);
    const stale = await browser.get(`/admin/people/${target.id}/roles`);
    expect(stale.body).toContain('id="reauth-note"');
    const reauth = await browser.submit(stale, `/admin/people/${target.id}/roles`, { roles: 'owner' });
    expect(reauth.location).toBe(`/admin/sign-in?${new URLSearchParams({ return_to: `/admin/people/${target.id}/roles`, reauthenticate: '1' })}`);
    expect(await rolesOf(target.id)).toEqual(['auditor']);
    const linkForm = await browser.get(`/admin/people/${target.id}/upstream-links/new`);
    expect(linkForm.body).toContain('id="reauth-note"');
    const link = await browser.submit(linkForm, `/admin/people/${target.id}/upstream-links`, { identity_provider: 'contoso', subject: 'late' });
    expect(link.location).toBe(`/admin/sign-in?${new URLSearchParams({ return_to: `/admin/people/${target.id}/upstream-links/new`, reauthenticate: '1' })}`);
    expect(await db.query(`SELECT * FROM "upstream_links" WHERE "user_id" = '${target.id}'`)).toEqual([]);
  });

  it('links an upstream identity and unlinks it after a confirmation; an unknown provider is shown on its field; sends a verification email', async () => {
    const owner = await consolePerson(nest, ['owner']);
    const target = await person('verify-me@example.org');
    const browser = await signIn(owner);
    const form = await browser.get(`/admin/people/${target.id}/upstream-links/new`);
    expect(form.body).toContain('<option value="contoso">');
    const before = await tableSnapshot(db, PEOPLE_TABLES);
    const unknown = await browser.submit(form, `/admin/people/${target.id}/upstream-links`, { identity_provider: 'nowhere', subject: 'abc' });
    expect(unknown.status).toBe(404);
    expect(fieldError(unknown, 'identity_provider')).toBe("No identity provider 'nowhere'.");
    expect(await tableSnapshot(db, PEOPLE_TABLES)).toBe(before);

    const linked = await browser.submit(form, `/admin/people/${target.id}/upstream-links`, { identity_provider: 'contoso', subject: ODD_SUBJECT });
    expect(linked).toMatchObject({ status: 303, location: `/admin/people/${target.id}` });
    expect(await db.query(`SELECT "idp_id", "subject" FROM "upstream_links" WHERE "user_id" = '${target.id}'`)).toEqual([{ idp_id: 'contoso', subject: ODD_SUBJECT }]);
    const page = await browser.get(linked.location!);
    const remove = `/admin/people/${target.id}/upstream-links/contoso/${encodeURIComponent(ODD_SUBJECT)}/remove`;
    expect(page.body).toContain(`href="${remove}"`);
    const confirm = await browser.get(remove);
    expect(headingOf(confirm)).toBe('Unlink an identity');
    const unlinked = await browser.submit(confirm, remove);
    expect(unlinked.status).toBe(303);
    expect(await db.query(`SELECT * FROM "upstream_links" WHERE "user_id" = '${target.id}'`)).toEqual([]);

    const verify = await browser.submit(page, `/admin/people/${target.id}/email-verification`);
    expect((await browser.get(verify.location!)).body).toContain('A link confirming the address is on its way to verify-me@example.org.');
    expect((await smtp.waitFor('verify-me@example.org')).text).toContain('/email/verify?token=');
  });

  it("edits a client's registration; the API's refusal is shown beside its field; a help desk and a client administrator on an admin client are refused", async () => {
    const owner = await consolePerson(nest, ['owner']);
    const { client } = await nest.get(ClientsService).create({ name: 'Billing', redirectUris: ['https://billing.example/cb'], scope: 'notes:read' });
    const browser = await signIn(owner);
    const form = await browser.get(`/admin/clients/${client.id}/edit`);
    expect(form.body).toContain('https://billing.example/cb</textarea>');
    const saved = await browser.submit(form, `/admin/clients/${client.id}/edit`, { client_name: 'Billing (prod)', grant_types: 'authorization_code', redirect_uris: 'https://billing.example/cb\r\nhttps://billing.example/cb2', scope: 'openid notes:read' });
    expect(saved).toMatchObject({ status: 303, location: `/admin/clients/${client.id}` });
    expect(await nest.get(ClientsService).findById(client.id)).toMatchObject({ name: 'Billing (prod)', grantTypes: ['authorization_code'], redirectUris: ['https://billing.example/cb', 'https://billing.example/cb2'], scope: 'notes:read openid' });
    expect(await audit('client.updated', `client:${client.id}`)).toEqual([{ actor: `user:${owner.userId}`, ip: '127.0.0.1' }]);

    const desk = await signIn(await consolePerson(nest, ['helpdesk']));
    const clientAdmin = await signIn(await consolePerson(nest, ['client-admin']));
    const before = await tableSnapshot(db, ['clients', 'audit_events']);
    const refused = await browser.submit(form, `/admin/clients/${client.id}/edit`, { client_name: 'Billing', grant_types: 'authorization_code', redirect_uris: 'http://billing.example/cb', scope: 'notes:read' });
    expect(refused.status).toBe(400);
    expect(fieldError(refused, 'redirect_uris')).toMatch(/must use https/);
    expect(refused.body).toContain('http://billing.example/cb</textarea>');
    const noGrant = await browser.submit(form, `/admin/clients/${client.id}/edit`, { client_name: 'Billing' });
    expect([noGrant.status, fieldError(noGrant, 'grant_types')]).toEqual([400, 'Choose at least one grant type.']);
    const unknownScope = await browser.submit(form, `/admin/clients/${client.id}/edit`, { client_name: 'Billing', grant_types: 'authorization_code', redirect_uris: 'https://billing.example/cb', scope: 'no-such-scope' });
    expect([unknownScope.status, fieldError(unknownScope, 'scope')]).toEqual([400, expect.stringMatching(/^Unknown scope/)]);

    const csrf = consoleCsrf(await desk.get('/admin'));
    expect((await desk.get(`/admin/clients/${client.id}/edit`)).status).toBe(403);
    const deskRefused = await desk.post(`/admin/clients/${client.id}/edit`, { csrf_token: csrf, client_name: 'Hijacked', grant_types: 'authorization_code', redirect_uris: 'https://evil.example/cb' });
    expect(deskRefused.status).toBe(403);
    const own = await clientAdmin.get('/admin/clients/latchkey-admin-console/edit');
    expect(own.status).toBe(200);
    const protectedRefusal = await clientAdmin.submit(own, '/admin/clients/latchkey-admin-console/edit', { client_name: 'Hijacked', grant_types: 'authorization_code', redirect_uris: 'https://evil.example/cb', scope: 'openid' });
    expect(protectedRefusal.status).toBe(403);
    expect(protectedRefusal.body).toContain('Not allowed');
    expect(await tableSnapshot(db, ['clients', 'audit_events'])).toBe(before);
  });

  it('shows an auditor no form and refuses each of their POSTs (403), nothing changed', async () => {
    const auditor = await consolePerson(nest, ['auditor']);
    const target = await person('auditor-target@example.org');
    const { client } = await nest.get(ClientsService).create({ name: 'Ledger', redirectUris: ['https://ledger.example/cb'], scope: 'notes:read' });
    const browser = await signIn(auditor);
    expect((await browser.get('/admin/people')).body).not.toContain('/admin/people/new');
    const page = await browser.get(`/admin/people/${target.id}`);
    for (const form of ['/edit"', '/roles"', '/upstream-links/new"', '/email-verification"']) expect(page.body).not.toContain(`/admin/people/${target.id}${form}`);
    expect((await browser.get(`/admin/clients/${client.id}`)).body).not.toContain('/edit"');
    const csrf = consoleCsrf(page);
    const before = await tableSnapshot(db, ['clients', 'audit_events', ...PEOPLE_TABLES]);
    const posts: [string, Record<string, string>][] = [
      ['/admin/people', { username: 'sneaky', invite: 'yes', email: 'sneaky@example.org' }],
      [`/admin/people/${target.id}/edit`, { name: 'Changed' }],
      [`/admin/people/${target.id}/roles`, { roles: 'owner' }],
      [`/admin/people/${target.id}/upstream-links`, { identity_provider: 'contoso', subject: 'taken-over' }],
      [`/admin/people/${target.id}/email-verification`, {}],
      [`/admin/people/${target.id}/invitation`, {}],
      [`/admin/clients/${client.id}/edit`, { client_name: 'Changed', grant_types: 'authorization_code', redirect_uris: 'https://ledger.example/cb' }],
    ];
    for (const [path, fields] of posts) {
      const refused = await browser.post(path, { csrf_token: csrf, ...fields });
      expect([path, refused.status, /Not allowed/.test(refused.body)]).toEqual([path, 403, true]);
    }
    expect(await tableSnapshot(db, ['clients', 'audit_events', ...PEOPLE_TABLES])).toBe(before);
    expect(smtp.to('sneaky@example.org')).toHaveLength(0);
  });

  it("refuses each form without the console session's CSRF token (403), nothing changed", async () => {
    const owner = await consolePerson(nest, ['owner']);
    const target = await person('csrf-target@example.org');
    const { client } = await nest.get(ClientsService).create({ name: 'Forged', redirectUris: ['https://forged.example/cb'] });
    const browser = await signIn(owner);
    const before = await tableSnapshot(db, ['clients', 'audit_events', ...PEOPLE_TABLES]);
    const paths = ['/admin/people', `/admin/people/${target.id}/edit`, `/admin/people/${target.id}/roles`, `/admin/people/${target.id}/upstream-links`, `/admin/people/${target.id}/upstream-links/contoso/x/remove`, `/admin/people/${target.id}/email-verification`, `/admin/people/${target.id}/invitation`, `/admin/clients/${client.id}/edit`];
    for (const path of paths) {
      for (const csrf of [{}, { csrf_token: 'forged' }] as Record<string, string>[]) {
        const refused = await browser.post(path, { ...csrf, username: 'forged', name: 'Forged', roles: 'owner', identity_provider: 'contoso', subject: 'forged', client_name: 'Forged', grant_types: 'authorization_code' });
        expect([path, refused.status, /This form has expired or was not sent from the admin console/.test(refused.body)]).toEqual([path, 403, true]);
      }
    }
    expect(await tableSnapshot(db, ['clients', 'audit_events', ...PEOPLE_TABLES])).toBe(before);
  });
});
