/**
 * Issue 48, the admin console's groups, identity providers and resource servers pages, over HTTP
 * as a browser without script sends them: each page for the roles that read it (the API's 403 page
 * for the others), create, change and delete round trips audited with who and from where, the
 * API's refusals shown beside the field they are about (4xx, nothing stored), forms refused without
 * the session's CSRF token, and an identity provider's secret never shown (only its variable's
 * name). The real app at its issuer; admin-console.e2e-spec.ts covers the console's own rules.
 */
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { DataSource } from 'typeorm';
import { GroupsService } from '../../src/groups/groups.service.js';
import { IdentityProvidersService } from '../../src/identity-providers/identity-providers.service.js';
import { ResourceServersService } from '../../src/resource-servers/resource-servers.service.js';
import { tableSnapshot } from '../helpers/admin-api.js';
import { consoleCsrf, consolePerson, fieldProblemOn, followSignIn, headingOf, noticeOf, signInWithNewBrowser, startConsoleApp, stopConsoleApp, type ConsolePerson } from '../helpers/admin-console.js';
import { MovableClock } from '../helpers/movable-clock.js';

const SECRET = 'contoso-upstream-secret-value-81d2';
const TABLES = ['groups', 'group_members', 'identity_providers', 'resource_servers'];
/** Nothing listens there: the provider is only stored, never reached. */
const ISSUER = 'http://127.0.0.1:9/contoso';
/** The OpenID Connect form's boxes as a new form has them ticked (a browser sends only ticked boxes). */
const TICKED = { enabled: 'true', create_accounts: 'true', pass_login_hint: 'true', sign_out_upstream: 'true', userinfo: 'true' };

describe('the admin console: groups, identity providers and resource servers (issue 48)', () => {
  let nest: NestFastifyApplication;
  let issuer: URL;
  let db: DataSource;
  const clock = new MovableClock();

  beforeAll(async () => {
    ({ nest, issuer, db } = await startConsoleApp(clock, { LATCHKEY_IDP_CONTOSO_SECRET: SECRET }));
  });
  afterAll(() => stopConsoleApp(nest, ['LATCHKEY_IDP_CONTOSO_SECRET']));

  const signIn = (person: ConsolePerson) => signInWithNewBrowser(issuer.origin, person, clock);
  /** The message shown beside a field, and whether the field says it is invalid and is described by it. */
  const fieldError = fieldProblemOn;
  const auditRows = (action: string, subject: string) => db.query(`SELECT "actor", "ip" FROM "audit_events" WHERE "action" = '${action}' AND "subject" = '${subject}'`) as Promise<{ actor: string; ip: string | null }[]>;

  it('shows the owner every new page and its section in the navigation, under the strict page policy', async () => {
    const owner = await consolePerson(nest, ['owner']);
    const { browser, page } = await signIn(owner);
    for (const section of ['/admin/groups', '/admin/resource-servers', '/admin/identity-providers']) expect(page.body).toContain(`href="${section}"`);
    const pages = {
      '/admin/groups': 'Groups',
      '/admin/groups/new': 'Create a group',
      '/admin/identity-providers': 'Identity providers',
      '/admin/identity-providers/new': 'Add an identity provider',
      '/admin/identity-providers/new?protocol=oidc': 'Add an OpenID Connect provider',
      '/admin/identity-providers/new?protocol=saml': 'Add a SAML 2.0 provider',
      '/admin/resource-servers': 'Resource servers',
      '/admin/resource-servers/new': 'Register a resource server',
    };
    for (const [path, title] of Object.entries(pages)) {
      const shown = await browser.get(path);
      expect([path, shown.status, headingOf(shown)]).toEqual([path, 200, title]);
      expect(shown.headers.get('content-security-policy')).not.toContain('unsafe-inline');
      expect(shown.headers.get('cache-control')).toBe('no-store');
      expect(shown.body).not.toMatch(/<script(?![^>]*\bsrc=)/);
    }
  });

  it('lets an owner create a group, add a person by username, rename it, take them out and delete it, each audited', async () => {
    const owner = await consolePerson(nest, ['owner']);
    const member = await consolePerson(nest, []);
    const { browser } = await signIn(owner);
    const created = await browser.submit(await browser.get('/admin/groups/new'), '/admin/groups', { display_name: 'Finance', external_id: '' });
    expect(created.status).toBe(303);
    const groupPage = created.location!;
    const groupId = groupPage.replace('/admin/groups/', '');
    expect(noticeOf(await browser.get(groupPage))).toBe('The group Finance is created. Add its members below.');
    expect(await auditRows('group.created', `group:${groupId}`)).toEqual([{ actor: `user:${owner.userId}`, ip: '127.0.0.1' }]);

    // By username, in any case; the person's page is linked from the members.
    const added = await browser.submit(await browser.get(groupPage), `${groupPage}/members`, { username: member.username.toUpperCase() });
    expect(added).toMatchObject({ status: 303, location: groupPage });
    const withMember = await browser.get(groupPage);
    expect(noticeOf(withMember)).toBe(`${member.username} is now a member of Finance.`);
    expect(withMember.body).toContain(`href="/admin/people/${member.userId}"`);
    expect(await nest.get(GroupsService).members(groupId)).toEqual([{ type: 'user', id: member.userId }]);
    expect(await auditRows('group.members_changed', `group:${groupId}`)).toEqual([{ actor: `user:${owner.userId}`, ip: '127.0.0.1' }]);

    const renamed = await browser.submit(await browser.get(`${groupPage}/edit`), `${groupPage}/edit`, { display_name: 'Finance team', external_id: 'entra-0001' });
    expect(renamed).toMatchObject({ status: 303, location: groupPage });
    expect(await nest.get(GroupsService).findById(groupId)).toMatchObject({ displayName: 'Finance team', externalId: 'entra-0001' });

    const removed = await browser.submit(await browser.get(groupPage), `${groupPage}/members/user/${member.userId}/remove`);
    expect(removed.status).toBe(303);
    expect(noticeOf(await browser.get(groupPage))).toBe(`${member.username} is no longer a member of Finance team.`);
    expect(await nest.get(GroupsService).members(groupId)).toEqual([]);

    const confirm = await browser.get(`${groupPage}/confirm/delete`);
    expect(headingOf(confirm)).toBe('Delete the group');
    expect(confirm.body).toContain('Delete the group Finance team?');
    const deleted = await browser.submit(confirm, `${groupPage}/delete`);
    expect(deleted).toMatchObject({ status: 303, location: '/admin/groups' });
    expect(noticeOf(await browser.get('/admin/groups'))).toBe('The group Finance team was deleted.');
    expect(await nest.get(GroupsService).findById(groupId)).toBeNull();
    expect(await auditRows('group.deleted', `group:${groupId}`)).toEqual([{ actor: `user:${owner.userId}`, ip: '127.0.0.1' }]);
  });

  it("shows what is wrong with a group form beside its field, with a 4xx, and stores nothing", async () => {
    const owner = await consolePerson(nest, ['owner']);
    const { browser } = await signIn(owner);
    const existing = await nest.get(GroupsService).create({ displayName: 'Support' }, { actor: 'cli' });
    const before = await tableSnapshot(db, TABLES);
    const form = await browser.get('/admin/groups/new');
    const empty = await browser.submit(form, '/admin/groups', { display_name: '  ' });
    expect(empty.status).toBe(400);
    expect(fieldError(empty, 'display_name')).toEqual({ message: 'Give the group a name.', linked: true });
    expect(empty.body).toContain('<title>Error: Create a group');
    const taken = await browser.submit(form, '/admin/groups', { display_name: 'Support', external_id: 'kept' });
    expect(taken.status).toBe(409);
    expect(fieldError(taken, 'display_name')).toEqual({ message: "A group named 'Support' exists already.", linked: true });
    expect(taken.body).toContain('value="kept"');

    const page = `/admin/groups/${existing.id}`;
    const unknown = await browser.submit(await browser.get(page), `${page}/members`, { username: 'nobody-by-that-name' });
    expect(unknown.status).toBe(400);
    expect(fieldError(unknown, 'username')).toEqual({ message: 'Nobody has the username nobody-by-that-name. Check the spelling, or find the person on the People page.', linked: true });
    expect(unknown.body).toContain('value="nobody-by-that-name"');
    expect(await tableSnapshot(db, TABLES)).toBe(before);
  });

  it('lets an owner add an OpenID Connect provider with its secret named by variable, never shown; then edit it', async () => {
    const owner = await consolePerson(nest, ['owner']);
    const { browser } = await signIn(owner);
    const form = await browser.get('/admin/identity-providers/new?protocol=oidc');
    const fields = { ...TICKED, id: 'contoso', name: 'Contoso', domains: 'Contoso.com, contoso.fr', issuer: ISSUER, client_id: 'latchkey', client_auth_method: 'client_secret_basic', secret_env: 'LATCHKEY_IDP_CONTOSO_SECRET', scope: '', groups_source: 'groups', groups_match: 'name' };
    const created = await browser.submit(form, '/admin/identity-providers', fields);
    expect(created).toMatchObject({ status: 303, location: '/admin/identity-providers/contoso' });
    const shown = await browser.get(created.location!);
    expect(headingOf(shown)).toBe('Contoso');
    expect(shown.body).toContain(`${issuer.origin}/federation/contoso/callback`);
    expect(shown.body).toContain('LATCHKEY_IDP_CONTOSO_SECRET');
    expect(shown.body).not.toContain(SECRET);
    const provider = await nest.get(IdentityProvidersService).show('contoso');
    expect(provider).toMatchObject({ enabled: true, settings: { domains: ['contoso.com', 'contoso.fr'], scope: 'openid email profile', groupsClaim: 'groups', clientAuth: { method: 'client_secret_basic', secret: { env: 'LATCHKEY_IDP_CONTOSO_SECRET' } } } });
    expect(await auditRows('idp.created', 'idp:contoso')).toEqual([{ actor: `user:${owner.userId}`, ip: '127.0.0.1' }]);

    // The edit form holds what is stored; an unticked box turns the setting off.
    const edit = await browser.get('/admin/identity-providers/contoso/edit');
    expect(edit.body).toContain('value="LATCHKEY_IDP_CONTOSO_SECRET"');
    const { enabled: _off, ...ticked } = TICKED;
    const saved = await browser.submit(edit, '/admin/identity-providers/contoso/edit', { ...ticked, name: 'Contoso Ltd', domains: 'contoso.com', issuer: ISSUER, client_id: 'latchkey', client_auth_method: 'client_secret_post', secret_env: 'LATCHKEY_IDP_CONTOSO_SECRET', scope: 'openid email', groups_source: '', groups_match: 'name' });
    expect(saved).toMatchObject({ status: 303, location: '/admin/identity-providers/contoso' });
    expect(noticeOf(await browser.get(saved.location!))).toBe('Contoso Ltd is saved.');
    expect(await nest.get(IdentityProvidersService).show('contoso')).toMatchObject({ name: 'Contoso Ltd', enabled: false, settings: { domains: ['contoso.com'], scope: 'openid email', groupsClaim: null, clientAuth: { method: 'client_secret_post' } } });
    expect(await auditRows('idp.updated', 'idp:contoso')).toEqual([{ actor: `user:${owner.userId}`, ip: '127.0.0.1' }]);
  });

  it("shows the API's refusal of a provider beside the setting it names, keeps what was typed, and stores nothing", async () => {
    const owner = await consolePerson(nest, ['owner']);
    const { browser } = await signIn(owner);
    const before = await tableSnapshot(db, TABLES);
    const form = await browser.get('/admin/identity-providers/new?protocol=oidc');
    const good = { ...TICKED, id: 'fabrikam', name: 'Fabrikam', domains: '', issuer: ISSUER, client_id: 'latchkey', client_auth_method: 'client_secret_basic', secret_env: 'LATCHKEY_IDP_FABRIKAM', scope: '', groups_source: '', groups_match: 'name' };

    const missing = await browser.submit(form, '/admin/identity-providers', { ...good, id: '', issuer: '', secret_env: '' });
    expect(missing.status).toBe(400);
    expect(missing.body).toContain('There are 3 problems');
    expect(fieldError(missing, 'id').linked).toBe(true);
    expect(fieldError(missing, 'issuer')).toEqual({ message: "Give the provider's issuer URL.", linked: true });
    expect(fieldError(missing, 'secret_env').message).toMatch(/^Name the environment variable that holds the client secret/);

    const insecure = await browser.submit(form, '/admin/identity-providers', { ...good, issuer: 'http://idp.example/' });
    expect(insecure.status).toBe(400);
    expect(fieldError(insecure, 'issuer')).toEqual({ message: 'issuer must be an https URL', linked: true });
    expect(insecure.body).toContain('value="Fabrikam"');

    const database = await browser.submit(form, '/admin/identity-providers', { ...good, secret_env: 'DATABASE_URL' });
    expect(database.status).toBe(400);
    expect(fieldError(database, 'secret_env')).toEqual({ message: expect.stringContaining('must name an environment variable LATCHKEY_IDP_'), linked: true });

    const badId = await browser.submit(form, '/admin/identity-providers', { ...good, id: 'Fabrikam Inc' });
    expect(badId.status).toBe(400);
    expect(fieldError(badId, 'id').message).toMatch(/^The id must be 1 to 64 lower-case letters/);

    const saml = await browser.submit(await browser.get('/admin/identity-providers/new?protocol=saml'), '/admin/identity-providers', { id: 'adfs', enabled: 'true', metadata_url: '' });
    expect(saml.status).toBe(400);
    expect(fieldError(saml, 'metadata_url')).toEqual({ message: "Give the URL of the provider's SAML metadata.", linked: true });
    expect(await tableSnapshot(db, TABLES)).toBe(before);
  });

  it('deletes a provider only after a confirmation and a recent sign-in, then audits it', async () => {
    const owner = await consolePerson(nest, ['owner']);
    await nest.get(IdentityProvidersService).create({ id: 'northwind', displayName: 'Northwind', protocol: 'saml', settings: { metadataUrl: 'http://127.0.0.1:9/metadata' } }, { actor: 'cli' });
    const { browser } = await signIn(owner);
    clock.advance(6 * 60_000);
    const confirmation = '/admin/identity-providers/northwind/confirm/delete';
    const confirm = await browser.get(confirmation);
    expect(headingOf(confirm)).toBe('Delete the identity provider');
    expect(confirm.body).toContain('id="reauth-note"');
    const before = await tableSnapshot(db, TABLES);
    const refused = await browser.submit(confirm, '/admin/identity-providers/northwind/delete');
    expect(refused).toMatchObject({ status: 303, location: `/admin/sign-in?${new URLSearchParams({ return_to: confirmation, reauthenticate: '1' })}` });
    expect(await tableSnapshot(db, TABLES)).toBe(before);

    clock.advance(30_000);
    const again = await followSignIn(browser, refused, owner, clock.now);
    expect(headingOf(again)).toBe('Delete the identity provider');
    expect(again.body).not.toContain('id="reauth-note"');
    const done = await browser.submit(again, '/admin/identity-providers/northwind/delete');
    expect(done).toMatchObject({ status: 303, location: '/admin/identity-providers' });
    expect(noticeOf(await browser.get('/admin/identity-providers'))).toBe('Northwind was deleted.');
    expect(await nest.get(IdentityProvidersService).find('northwind')).toBeNull();
    expect(await auditRows('idp.deleted', 'idp:northwind')).toEqual([{ actor: `user:${owner.userId}`, ip: '127.0.0.1' }]);
  });

  it('lets a client administrator register a resource server, shows a refused address beside its field, and deletes it after a confirmation', async () => {
    const clientAdmin = await consolePerson(nest, ['client-admin']);
    const { browser, page } = await signIn(clientAdmin);
    expect(page.body).toContain('href="/admin/resource-servers"');
    const form = await browser.get('/admin/resource-servers/new');
    const before = await tableSnapshot(db, TABLES);
    const fragment = await browser.submit(form, '/admin/resource-servers', { uri: 'https://orders.example/api#v1', name: 'Orders', access_token_format: 'jwt' });
    expect(fragment.status).toBe(400);
    expect(fieldError(fragment, 'uri')).toEqual({ message: 'A resource URI must not contain a fragment (RFC 8707 section 2).', linked: true });
    expect(fragment.body).toMatch(/value="jwt" checked/);
    const introspector = await browser.submit(form, '/admin/resource-servers', { uri: 'https://orders.example/api', introspector: 'no-such-client' });
    expect(fieldError(introspector, 'introspector').message).toBe("No client with the id 'no-such-client' to introspect with.");
    expect(await tableSnapshot(db, TABLES)).toBe(before);

    const registered = await browser.submit(form, '/admin/resource-servers', { uri: 'https://orders.example/api', name: 'Orders', access_token_format: 'jwt' });
    expect(registered).toMatchObject({ status: 303, location: '/admin/resource-servers' });
    const list = await browser.get('/admin/resource-servers');
    expect(noticeOf(list)).toBe('Orders is registered: clients can now ask for tokens for it.');
    const [server] = await nest.get(ResourceServersService).list();
    expect(server).toMatchObject({ uri: 'https://orders.example/api', name: 'Orders', accessTokenFormat: 'jwt' });
    expect(await auditRows('resource_server.registered', `resource_server:${server.id}`)).toEqual([{ actor: `user:${clientAdmin.userId}`, ip: '127.0.0.1' }]);

    const confirm = await browser.get(`/admin/resource-servers/${server.id}/confirm/delete`);
    expect(confirm.body).toContain('Delete the resource server Orders (https://orders.example/api)?');
    const deleted = await browser.submit(confirm, `/admin/resource-servers/${server.id}/delete`);
    expect(deleted).toMatchObject({ status: 303, location: '/admin/resource-servers' });
    expect(noticeOf(await browser.get('/admin/resource-servers'))).toBe('The resource server Orders was deleted.');
    expect(await nest.get(ResourceServersService).list()).toEqual([]);
    expect(await auditRows('resource_server.deleted', `resource_server:${server.id}`)).toEqual([{ actor: `user:${clientAdmin.userId}`, ip: '127.0.0.1' }]);
    expect((await browser.get(`/admin/resource-servers/${server.id}/confirm/delete`)).status).toBe(404);
  });

  it('shows each role only the sections it reads, and refuses what it may not change with the 403 page, changing nothing', async () => {
    const group = await nest.get(GroupsService).create({ displayName: 'Auditors see this' }, { actor: 'cli' });
    const target = await consolePerson(nest, []);
    const server = await nest.get(ResourceServersService).register({ uri: 'https://ledger.example/api', name: 'Ledger' }, 'cli');
    const before = await tableSnapshot(db, TABLES);
    const roles = { helpdesk: ['/admin/groups', '/admin/resource-servers', '/admin/identity-providers'], 'client-admin': ['/admin/groups', '/admin/identity-providers'], auditor: [] } as const;
    for (const [role, closed] of Object.entries(roles)) {
      const { browser, page } = await signIn(await consolePerson(nest, [role as keyof typeof roles]));
      for (const section of ['/admin/groups', '/admin/resource-servers', '/admin/identity-providers']) {
        const open = !(closed as readonly string[]).includes(section);
        expect([role, section, page.body.includes(`href="${section}"`)]).toEqual([role, section, open]);
        const shown = await browser.get(section);
        expect([role, section, shown.status]).toEqual([role, section, open ? 200 : 403]);
        // Only an owner (groups, providers) and a client administrator (resource servers) are offered a change.
        const offered = role === 'client-admin' && section === '/admin/resource-servers';
        expect([role, section, shown.body.includes(`href="${section}/new"`)]).toEqual([role, section, offered]);
      }
      const csrf = consoleCsrf(page);
      const attempts: [string, Record<string, string>][] = [
        ['/admin/groups', { display_name: 'Sneaky' }],
        [`/admin/groups/${group.id}/members`, { username: target.username }],
        [`/admin/groups/${group.id}/delete`, {}],
        ['/admin/identity-providers', { protocol: 'saml', id: 'sneaky', metadata_url: 'https://idp.example/metadata' }],
        ...(role === 'client-admin' ? [] : ([[`/admin/resource-servers/${server.id}/delete`, {}], ['/admin/resource-servers', { uri: 'https://sneaky.example/' }]] as [string, Record<string, string>][])),
      ];
      for (const [path, fields] of attempts) {
        const refused = await browser.post(path, { csrf_token: csrf, ...fields });
        expect([role, path, refused.status, /Not allowed/.test(refused.body)]).toEqual([role, path, 403, true]);
      }
      for (const form of ['/admin/groups/new', '/admin/identity-providers/new', `/admin/groups/${group.id}/edit`]) expect([role, form, (await browser.get(form)).status]).toEqual([role, form, 403]);
    }
    expect(await tableSnapshot(db, TABLES)).toBe(before);
  });

  it("refuses every new form without the console session's CSRF token, changing nothing", async () => {
    const owner = await consolePerson(nest, ['owner']);
    const group = await nest.get(GroupsService).create({ displayName: 'Guarded' }, { actor: 'cli' });
    const server = await nest.get(ResourceServersService).register({ uri: 'https://guarded.example/api' }, 'cli');
    const { browser } = await signIn(owner);
    const before = await tableSnapshot(db, TABLES);
    const forms: [string, Record<string, string>][] = [
      ['/admin/groups', { display_name: 'No token' }],
      [`/admin/groups/${group.id}/edit`, { display_name: 'Renamed' }],
      [`/admin/groups/${group.id}/delete`, {}],
      ['/admin/identity-providers', { protocol: 'saml', id: 'notoken', metadata_url: 'https://idp.example/metadata' }],
      ['/admin/resource-servers', { uri: 'https://no-token.example/' }],
      [`/admin/resource-servers/${server.id}/delete`, {}],
    ];
    for (const csrf of [{}, { csrf_token: 'forged' }] as Record<string, string>[]) {
      for (const [path, fields] of forms) {
        const refused = await browser.post(path, { ...csrf, ...fields });
        expect([path, refused.status, refused.body.includes('This form has expired or was not sent from the admin console')]).toEqual([path, 403, true]);
      }
    }
    expect(await tableSnapshot(db, TABLES)).toBe(before);
  });
});
