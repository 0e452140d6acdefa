/**
 * Issue 45 through the admin CLI, a process of its own on this file's database while the server
 * runs: idps:create|update|list|show|delete, users:link, users:unlink, users:show's upstream_links
 * and clients:sign-in. JSON on stdout for scripts, one clear line on stderr for people, every
 * change audited. Then the person's own linking step, POST /federation/:idp/link, from the
 * unprivileged side: it works from our own page, and is refused without a session, without the
 * form's token, cross-site, and for a disabled provider, with the person's links unchanged.
 */
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { getDataSourceToken } from '@nestjs/typeorm';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DataSource } from 'typeorm';
import { ClientsService } from '../../src/clients/clients.service.js';
import { IdentityProvidersService } from '../../src/identity-providers/identity-providers.service.js';
import { UpstreamAccounts } from '../../src/identity-providers/upstream-accounts.service.js';
import { UsersService } from '../../src/users/users.service.js';
import { startAtIssuer } from '../helpers/app-at-issuer.js';
import { hiddenFields } from '../helpers/browser.js';
import { runCli, type CliResult } from '../helpers/cli.js';
import { dropTestDatabase } from '../helpers/test-database.js';
import { FederatedBrowser, type Hop } from '../federation/support/federated-browser.js';
import { UpstreamOpenIdProvider } from '../federation/support/upstream-openid-provider.js';

const SECRET = 'contoso-secret-never-in-the-database-0123456789';
const PASSWORD = 'correct horse battery staple';

/** A successful run: exit 0, nothing on stderr, one JSON document on stdout. */
async function cliJson<T = Record<string, unknown>>(...args: string[]): Promise<T> {
  const result = await runCli(args);
  expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
  return JSON.parse(result.stdout) as T;
}

/** A refused run: its exit status, its one line on stderr, nothing on stdout. */
async function refused(args: string[]): Promise<{ code: number | null; error: string }> {
  const result: CliResult = await runCli(args);
  expect(result.stdout).toBe('');
  return { code: result.code, error: result.stderr.split('\n')[0] };
}

interface Link {
  idp: string;
  subject: string;
  origin: string;
  created_at: string;
  last_sign_in_at: string | null;
}

describe('identity providers through the admin CLI', () => {
  let nest: NestFastifyApplication;
  let issuer: URL;
  let db: DataSource;
  let contoso: UpstreamOpenIdProvider;
  let clientId: string;
  const files = mkdtempSync(join(tmpdir(), 'latchkey-idps-cli-'));

  const count = async (table: string): Promise<number> => Number((await db.query(`SELECT COUNT(*) AS n FROM "${table}"`))[0].n);
  /** A person's links as the server sees them (users:show prints the same list: the tests that run it compare). */
  const linksOf = async (username: string): Promise<Link[]> => nest.get(UpstreamAccounts).linksOf((await nest.get(UsersService).findByUsername(username))!.id);

  beforeAll(async () => {
    ({ nest, issuer } = await startAtIssuer({ OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true', CONTOSO_SECRET: SECRET }));
    db = nest.get<DataSource>(getDataSourceToken());
    contoso = await UpstreamOpenIdProvider.start(
      { carol: { email: 'carol@contoso.example', email_verified: true, preferred_username: 'carol' }, dave: { email: 'dave@contoso.example', email_verified: true, preferred_username: 'dave' } },
      [{ client_id: 'latchkey', client_secret: SECRET, redirect_uris: [`${issuer.origin}/federation/contoso/callback`], token_endpoint_auth_method: 'client_secret_basic' }],
    );
    for (const username of ['alice', 'bob', 'carol', 'dave']) await nest.get(UsersService).create(username, PASSWORD);
    clientId = (await nest.get(ClientsService).create({ name: 'Payroll', redirectUris: ['http://127.0.0.1:9/callback'], scope: 'notes:read' })).client.id;
    // idps:create keeps the path; the document is read at sign-in (and by doctor), not here.
    writeFileSync(join(files, 'adfs.xml'), '<EntityDescriptor/>');
  }, 60_000);

  afterAll(async () => {
    await contoso?.stop();
    await nest?.close();
    await dropTestDatabase();
  });

  describe('idps:create', () => {
    it('creates an OpenID Connect and a SAML provider from flags, prints them as JSON with what to register upstream, the secret only by reference', async () => {
      const [oidc, saml] = await Promise.all([
        cliJson('idps:create', '--id', 'contoso', '--protocol', 'oidc', '--name', 'Contoso', '--issuer', contoso.issuer, '--client-id', 'latchkey', '--client-secret-env', 'CONTOSO_SECRET', '--domain', 'Contoso.Example', '--trust-email', '--map', 'given_name=givenName'),
        cliJson('idps:create', '--id', 'adfs', '--protocol', 'saml', '--name', 'Fabrikam ADFS', '--metadata-file', join(files, 'adfs.xml'), '--domain', 'fabrikam.example', '--no-create-accounts'),
      ]);
      expect(oidc).toMatchObject({
        id: 'contoso',
        name: 'Contoso',
        protocol: 'oidc',
        enabled: true,
        settings: { issuer: contoso.issuer, clientId: 'latchkey', clientAuth: { method: 'client_secret_basic', secret: { env: 'CONTOSO_SECRET' } }, domains: ['contoso.example'], trustEmail: true, createAccounts: true, mapping: { givenName: 'givenName', email: 'email' } },
        redirect_uri: `${issuer.origin}/federation/contoso/callback`,
        linked_people: 0,
      });
      expect(saml).toMatchObject({
        id: 'adfs',
        protocol: 'saml',
        settings: { metadataFile: join(files, 'adfs.xml'), metadataUrl: null, createAccounts: false, domains: ['fabrikam.example'] },
        saml_metadata_url: `${issuer.origin}/federation/adfs/saml/metadata`,
        saml_acs_url: `${issuer.origin}/federation/adfs/saml/acs`,
      });
      // The variable is set for the CLI too: what is kept is its name, never what it holds.
      const rows = (await db.query('SELECT "settings" FROM "identity_providers"')) as { settings: unknown }[];
      expect(JSON.stringify(rows)).toContain('CONTOSO_SECRET');
      expect(JSON.stringify(rows)).not.toContain(SECRET);
    });

    it('takes no secret as a value: only --client-secret-env and --client-secret-file (and the private key\'s), and a --client-secret-env that is no variable name is refused', async () => {
      const help = (await runCli(['--help'])).stdout;
      const create = help.split('\n').findIndex((line) => line.includes('idps:create'));
      const usage = help.split('\n').slice(create, create + 3).join('\n');
      expect([...new Set(usage.match(/--(client-secret|private-key)[\w-]*/g))].sort()).toEqual(['--client-secret-env', '--client-secret-file', '--client-secret-post', '--private-key-env', '--private-key-file']);
      const base = ['idps:create', '--id', 'leaky', '--protocol', 'oidc', '--issuer', 'https://login.leaky.example', '--client-id', 'latchkey'];
      const [asValue, asName] = await Promise.all([refused([...base, '--client-secret', SECRET]), refused([...base, '--client-secret-env', 'hunter2!'])]);
      expect(asValue.code).toBe(2);
      expect(asValue.error).toMatch(/^latchkey: Unknown option '--client-secret'/);
      expect(asName).toEqual({ code: 1, error: 'latchkey: --client-secret-env takes the name of the environment variable that holds the secret (letters, digits and _), never the secret itself' });
      expect(JSON.stringify(await db.query('SELECT * FROM "identity_providers"'))).not.toContain('hunter2');
    });

    it('refuses with one clear line on stderr and exit 1; nothing is created and nothing audited', async () => {
      const before = { idps: await count('identity_providers'), audit: await count('audit_events') };
      const oidc = (id: string) => ['idps:create', '--id', id, '--protocol', 'oidc', '--issuer', 'https://login.fabrikam.example', '--client-id', 'latchkey', '--public-client'];
      const outcomes = await Promise.all([
        refused(['idps:create', '--id', 'corp', '--protocol', 'ldap', '--issuer', 'https://login.corp.example', '--client-id', 'x']),
        refused([...oidc('fabrikam'), '--domain', 'contoso.example']),
        refused(oidc('contoso')),
        refused([...oidc('two'), '--client-secret-env', 'A_SECRET']),
      ]);
      expect(outcomes).toEqual([
        { code: 1, error: 'latchkey: protocol must be oidc or saml' },
        { code: 1, error: 'latchkey: The domain contoso.example belongs to the identity provider "contoso" already.' },
        { code: 1, error: 'latchkey: An identity provider "contoso" exists already.' },
        { code: 1, error: 'latchkey: give one of --client-secret-env, --public-client' },
      ]);
      expect({ idps: await count('identity_providers'), audit: await count('audit_events') }).toEqual(before);
    });
  });

  describe('idps:list, idps:show, idps:update', () => {
    it('lists the providers in id order, and shows one', async () => {
      const [list, shown] = await Promise.all([cliJson<{ id: string }[]>('idps:list'), cliJson('idps:show', '--id', 'contoso')]);
      expect(list.map((provider) => provider.id)).toEqual(['adfs', 'contoso']);
      expect(shown).toMatchObject({ id: 'contoso', name: 'Contoso', enabled: true, linked_people: 0 });
    });

    it('changes only what the flags name: disabled and renamed, then enabled again', async () => {
      const disabled = await cliJson('idps:update', '--id', 'contoso', '--disable', '--name', 'Contoso Ltd');
      expect(disabled).toMatchObject({ enabled: false, name: 'Contoso Ltd', settings: { issuer: contoso.issuer, clientAuth: { secret: { env: 'CONTOSO_SECRET' } }, domains: ['contoso.example'], trustEmail: true } });
      expect(await cliJson('idps:update', '--id', 'contoso', '--enable', '--name', 'Contoso')).toMatchObject({ enabled: true, name: 'Contoso' });
    });

    it('refuses an unknown provider, a change of protocol, and contradicting flags', async () => {
      const [show, remove, protocol, both] = await Promise.all([
        refused(['idps:show', '--id', 'nope']),
        refused(['idps:delete', '--id', 'nope']),
        refused(['idps:update', '--id', 'adfs', '--protocol', 'oidc']),
        refused(['idps:update', '--id', 'contoso', '--enable', '--disable']),
      ]);
      expect([show, remove]).toEqual(Array(2).fill({ code: 1, error: 'latchkey: No identity provider "nope".' }));
      expect(protocol.code).toBe(2);
      expect(protocol.error).toMatch(/^latchkey: Unknown option '--protocol'/);
      expect(both).toEqual({ code: 1, error: 'latchkey: --enable and --disable contradict each other' });
    });
  });

  describe('users:link, users:unlink, users:show', () => {
    it('links an upstream identity to a person; users:show lists it under upstream_links', async () => {
      const linked = await cliJson<{ username: string; upstream_links: Link[] }>('users:link', '--username', 'alice', '--idp', 'contoso', '--subject', 'alice-at-contoso');
      expect(linked).toEqual({ username: 'alice', upstream_links: [{ idp: 'contoso', subject: 'alice-at-contoso', origin: 'admin', created_at: expect.any(String), last_sign_in_at: null }] });
      const [shown, provider] = await Promise.all([cliJson<{ username: string; upstream_links: Link[] }>('users:show', '--username', 'alice'), cliJson('idps:show', '--id', 'contoso')]);
      expect(shown).toMatchObject({ username: 'alice', upstream_links: linked.upstream_links });
      expect(provider).toMatchObject({ linked_people: 1 });
    });

    it('a link that is someone else\'s is refused, naming why; linking the same again changes nothing', async () => {
      const audited = await count('audit_events');
      const [taken, again] = await Promise.all([refused(['users:link', '--username', 'bob', '--idp', 'contoso', '--subject', 'alice-at-contoso']), cliJson<{ upstream_links: Link[] }>('users:link', '--username', 'alice', '--idp', 'contoso', '--subject', 'alice-at-contoso')]);
      expect(taken).toEqual({ code: 1, error: 'latchkey: That contoso identity is linked to another person already; unlink it there first.' });
      expect(again.upstream_links).toHaveLength(1);
      expect(await linksOf('bob')).toEqual([]);
      expect(await count('audit_events')).toBe(audited);
    });

    it('refuses an unknown provider or person, and an unlink of a link the person does not have', async () => {
      const outcomes = await Promise.all([
        refused(['users:link', '--username', 'bob', '--idp', 'nope', '--subject', 'x']),
        refused(['users:link', '--username', 'nobody', '--idp', 'contoso', '--subject', 'x']),
        refused(['users:unlink', '--username', 'bob', '--idp', 'contoso', '--subject', 'alice-at-contoso']),
      ]);
      expect(outcomes).toEqual([
        { code: 1, error: 'latchkey: No identity provider "nope".' },
        { code: 1, error: 'latchkey: No user named "nobody".' },
        { code: 1, error: 'latchkey: bob has no such link to contoso' },
      ]);
      expect(await linksOf('alice')).toHaveLength(1);
    });

    it('unlinks', async () => {
      expect(await cliJson('users:unlink', '--username', 'alice', '--idp', 'contoso', '--subject', 'alice-at-contoso')).toEqual({ username: 'alice', upstream_links: [] });
      // Linked again (by the test, not audited as the CLI), to be there when the provider is deleted.
      await nest.get(UpstreamAccounts).link('contoso', 'alice-at-contoso', (await nest.get(UsersService).findByUsername('alice'))!, 'admin', 'test');
    });
  });

  describe('clients:sign-in', () => {
    it('restricts a client to some providers, or opens it again; JSON says what is allowed', async () => {
      expect(await cliJson('clients:sign-in', '--client-id', clientId, '--idp', 'contoso', '--no-local')).toEqual({ client_id: clientId, identity_providers: ['contoso'], local_sign_in: false });
      expect(await cliJson('clients:sign-in', '--client-id', clientId, '--any-idp')).toEqual({ client_id: clientId, identity_providers: 'any', local_sign_in: true });
    });

    it('refuses an unknown client or provider', async () => {
      const outcomes = await Promise.all([refused(['clients:sign-in', '--client-id', 'nope', '--idp', 'contoso']), refused(['clients:sign-in', '--client-id', clientId, '--idp', 'nope'])]);
      expect(outcomes).toEqual([
        { code: 1, error: 'latchkey: No client with id "nope".' },
        { code: 1, error: 'latchkey: No identity provider "nope".' },
      ]);
    });
  });

  describe("the person's own linking step, POST /federation/:idp/link, from the unprivileged side", () => {
    const LINK = '/federation/contoso/link';

    async function signInLocally(username: string): Promise<{ browser: FederatedBrowser; home: Hop }> {
      const browser = new FederatedBrowser();
      const login = await browser.get(new URL('/login', issuer));
      const answer = await browser.post(new URL('/login', issuer), { ...hiddenFields(login.page.body, '/login'), username, password: PASSWORD });
      return { browser, home: await browser.follow(answer) };
    }

    it('from our own page, signed in, with the form\'s token: the person signs in upstream and the link is theirs', async () => {
      const { browser, home } = await signInLocally('carol');
      const linking = await browser.post(new URL(LINK, issuer), hiddenFields(home.page.body, LINK));
      expect(linking.page.status).toBe(303);
      expect(new URL(linking.page.location!).origin).toBe(contoso.issuer);
      const back = await browser.signInUpstream(await browser.follow(linking), 'carol');
      // Home sends a signed-in person on to the account page (issue 48).
      expect(back.url.href).toBe(`${issuer.origin}/account`);
      expect(await linksOf('carol')).toEqual([expect.objectContaining({ idp: 'contoso', subject: 'carol', origin: 'linked' })]);
    });

    it('refused without a session, without the form\'s token, cross-site, from another origin, and for a disabled provider: no trip upstream, links unchanged', async () => {
      const { browser, home } = await signInLocally('dave');
      const form = hiddenFields(home.page.body, LINK);
      const links = await count('upstream_links');
      const ours = browser.site(issuer);
      const attempts = {
        noSession: (await new FederatedBrowser().post(new URL(LINK, issuer), form)).page,
        noToken: await ours.post(`${issuer.origin}${LINK}`, {}),
        wrongToken: await ours.post(`${issuer.origin}${LINK}`, { csrf_token: `${form.csrf_token}x` }),
        crossSite: await ours.post(`${issuer.origin}${LINK}`, form, { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document' }),
        otherOrigin: await ours.post(`${issuer.origin}${LINK}`, form, { origin: 'https://attacker.example' }),
      };
      for (const [attempt, page] of Object.entries(attempts)) expect({ attempt, status: page.status, location: page.location }).toEqual({ attempt, status: 403, location: undefined });
      const providers = nest.get(IdentityProvidersService);
      await providers.update('contoso', { enabled: false }, 'test');
      try {
        const disabled = await ours.post(`${issuer.origin}${LINK}`, form);
        expect({ status: disabled.status, location: disabled.location }).toEqual({ status: 404, location: undefined });
      } finally {
        await providers.update('contoso', { enabled: true }, 'test');
      }
      expect(await count('upstream_links')).toBe(links);
      expect(await linksOf('dave')).toEqual([]);
    });

    it('an upstream identity an administrator linked to someone else is not linked to this person: a page says so', async () => {
      await nest.get(UpstreamAccounts).link('contoso', 'dave', (await nest.get(UsersService).findByUsername('bob'))!, 'admin', 'test');
      const { browser, home } = await signInLocally('dave');
      const back = await browser.signInUpstream(await browser.follow(await browser.post(new URL(LINK, issuer), hiddenFields(home.page.body, LINK))), 'dave');
      expect(back.page.status).toBe(409);
      expect(back.page.body).toContain('That Contoso account is linked to another person here already, so it was not linked to yours.');
      expect(await linksOf('dave')).toEqual([]);
      expect(await linksOf('bob')).toEqual([expect.objectContaining({ subject: 'dave', origin: 'admin' })]);
    });
  });

  describe('idps:delete', () => {
    it('deletes the provider and every link to it; the people stay', async () => {
      const people = await count('users');
      expect(await cliJson('idps:delete', '--id', 'contoso')).toEqual({ deleted: 'contoso', links_removed: 3 });
      expect(await count('users')).toBe(people);
      expect(await count('upstream_links')).toBe(0);
      expect(await cliJson('users:show', '--username', 'alice')).toMatchObject({ username: 'alice', upstream_links: [] });
      expect(await count('identity_providers')).toBe(1);
    });

    it('every change above is in the audit log, by whom, about what', async () => {
      const events = await cliJson<{ actor: string; action: string; subject: string; details: Record<string, unknown> | null }[]>('audit:list', '--limit', '200');
      const carol = await nest.get(UsersService).findByUsername('carol');
      const alice = await nest.get(UsersService).findByUsername('alice');
      // Listed newest first; events of the same second in no particular order: compared as sets.
      const federation = events.filter((event) => /^(idp\.|user\.upstream_)/.test(event.action) && event.actor !== 'test');
      expect(federation.map(({ actor, action, subject }) => `${actor} ${action} ${subject}`).sort()).toEqual(
        [
          'cli idp.created idp:contoso',
          'cli idp.created idp:adfs',
          'cli idp.updated idp:contoso',
          'cli idp.updated idp:contoso',
          `cli user.upstream_linked user:${alice!.id}`,
          `cli user.upstream_unlinked user:${alice!.id}`,
          `user:${carol!.id} user.upstream_linked user:${carol!.id}`,
          'cli idp.deleted idp:contoso',
        ].sort(),
      );
      const details = (action: string) => federation.filter((event) => event.action === action).map((event) => JSON.stringify(event.details)).sort();
      expect(details('idp.deleted')).toEqual([JSON.stringify({ links_removed: 3 })]);
      expect(details('idp.updated')).toEqual(Array(2).fill(JSON.stringify({ changed: ['enabled', 'name'] })));
      expect(details('user.upstream_linked')).toEqual([{ idp: 'contoso', origin: 'admin' }, { idp: 'contoso', origin: 'linked' }].map((d) => JSON.stringify(d)));
      // clients:sign-in changes the client: audited as its update, once per change.
      expect(events.filter((event) => event.action === 'client.updated' && event.subject === `client:${clientId}` && event.actor === 'cli')).toHaveLength(2);
      expect(JSON.stringify(events)).not.toContain(SECRET);
    });
  });
});
