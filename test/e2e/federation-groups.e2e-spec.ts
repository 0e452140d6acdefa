/**
 * Issue 46, groups from upstream identity providers' claims: at every sign-in through a provider
 * configured with a groups claim (OpenID Connect) or attribute (SAML), the person's memberships that
 * came from it are made to match what it says now; memberships an administrator or SCIM made are
 * never taken out by it. The company's OpenID Provider is node-oidc-provider in its own process
 * (its `groups` scope releases a `groups` claim); the SAML IdP is Debian's SimpleSAMLphp, sending
 * memberOf as Entra ID's groups claim URI. A stock relying party (openid-client) shows a client
 * requiring a group letting the person in only when the upstream says they are in it. Then the
 * settings through the admin CLI: the flags, what idps:show prints, and bad values refused with
 * nothing changed.
 */
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { getDataSourceToken } from '@nestjs/typeorm';
import * as oidc from 'openid-client';
import type { DataSource } from 'typeorm';
import { ClientsService } from '../../src/clients/clients.service.js';
import { placeholders } from '../../src/database/prepared-statement.js';
import type { Group } from '../../src/groups/group.entity.js';
import { GroupsService } from '../../src/groups/groups.service.js';
import { IdentityProvidersService } from '../../src/identity-providers/identity-providers.service.js';
import { UPSTREAM_GROUPS_LIMIT } from '../../src/identity-providers/upstream-group-values.js';
import { startAtIssuer } from '../helpers/app-at-issuer.js';
import { runCli } from '../helpers/cli.js';
import { dropTestDatabase } from '../helpers/test-database.js';
import { FederatedBrowser, type Hop } from '../federation/support/federated-browser.js';
import { makeSigningKeys } from '../federation/support/saml-fixtures.js';
import { signInAtSimpleSamlPhp } from '../federation/support/saml-sign-in.js';
import { SAML_GROUPS_ATTRIBUTE, SimpleSamlPhp } from '../federation/support/simplesamlphp.js';
import { UpstreamOpenIdProvider } from '../federation/support/upstream-openid-provider.js';

const SECRET = 'contoso-secret-for-latchkey-groups-0123456789';
const RP_REDIRECT_URI = 'http://127.0.0.1:9/callback';
/** Three providers on the one upstream: by name, by external id, by name creating unknown groups. */
const PROVIDERS = ['contoso', 'contoso-ids', 'contoso-create'] as const;

describe('groups from upstream identity providers\' claims (issue 46)', () => {
  let nest: NestFastifyApplication;
  let issuer: URL;
  let db: DataSource;
  let groups: GroupsService;
  let contoso: UpstreamOpenIdProvider;
  let fabrikam: SimpleSamlPhp;
  let rp: oidc.Configuration;
  const group: Record<string, Group> = {};

  const query = <T>(sql: string, parameters: unknown[] = []): Promise<T[]> => db.query(placeholders(sql, db.options.type), parameters);
  const count = async (table: string): Promise<number> => Number((await db.query(`SELECT COUNT(*) AS n FROM "${table}"`))[0].n);
  /** The person linked to `subject` at `idp`. */
  const personOf = async (idp: string, subject: string): Promise<string> => (await query<{ user_id: string }>('SELECT "user_id" FROM "upstream_links" WHERE "idp_id" = ? AND "subject" = ?', [idp, subject]))[0].user_id;
  /** The names of the groups a person is directly in. */
  const groupsOf = async (userId: string): Promise<string[]> => (await groups.directGroupsOf(userId)).map((g) => g.displayName);
  /** What the provider vouches for: group name → whether its sync made the membership. */
  const vouched = async (idp: string, userId: string): Promise<Record<string, boolean>> => {
    const rows = await query<{ display_name: string; added_by_upstream: boolean | number }>(
      'SELECT "g"."display_name", "u"."added_by_upstream" FROM "upstream_group_memberships" "u" JOIN "groups" "g" ON "g"."id" = "u"."group_id" WHERE "u"."idp_id" = ? AND "u"."user_id" = ?',
      [idp, userId],
    );
    return Object.fromEntries(rows.map((row) => [row.display_name, Boolean(row.added_by_upstream)]));
  };
  const membershipChanges = async (actor: string): Promise<{ subject: string; details: { added: unknown[]; removed: unknown[] } }[]> =>
    (await query<{ subject: string; details: unknown }>('SELECT "subject", "details" FROM "audit_events" WHERE "action" = ? AND "actor" = ? ORDER BY "id"', ['group.members_changed', actor])).map((row) => ({
      subject: row.subject,
      details: (typeof row.details === 'string' ? JSON.parse(row.details) : row.details) as { added: unknown[]; removed: unknown[] },
    }));

  beforeAll(async () => {
    ({ nest, issuer } = await startAtIssuer({ OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true', CONTOSO_SECRET: SECRET, LOGIN_THROTTLE_ENABLED: 'false' }));
    db = nest.get<DataSource>(getDataSourceToken());
    groups = nest.get(GroupsService);
    for (const [name, externalId] of [['Engineering', null], ['Staff', null], ['Payroll Access', null], ['Finance', null], ['Operations', 'obj-ops-7f3a']] as const) {
      group[name] = await groups.create({ displayName: name, externalId }, 'test');
    }
    const many = [...Array.from({ length: UPSTREAM_GROUPS_LIMIT }, (_, i) => `not-here-${i}`), 'Staff'];
    contoso = await UpstreamOpenIdProvider.start(
      {
        ana: { email: 'ana@contoso.example', email_verified: true, preferred_username: 'ana', groups: ['Engineering', 'Unknown Team', 'x'.repeat(300)] },
        dana: { email: 'dana@contoso.example', email_verified: true, preferred_username: 'dana', groups: ['Staff', 'Engineering'] },
        erin: { email: 'erin@contoso.example', email_verified: true, preferred_username: 'erin', groups: 'Engineering,Finance' },
        bruno: { email: 'bruno@contoso.example', email_verified: true, preferred_username: 'bruno', groups: [] },
        olga: { email: 'olga@contoso.example', email_verified: true, preferred_username: 'olga', groups: ['obj-ops-7f3a', 'Engineering'] },
        fred: { email: 'fred@contoso.example', email_verified: true, preferred_username: 'fred', groups: ['Staff', 'New Team'] },
        max: { email: 'max@contoso.example', email_verified: true, preferred_username: 'max', groups: many },
      },
      [{ client_id: 'latchkey', client_secret: SECRET, redirect_uris: PROVIDERS.map((id) => `${issuer.origin}/federation/${id}/callback`), token_endpoint_auth_method: 'client_secret_basic' }],
    );
    const common = { issuer: contoso.issuer, clientId: 'latchkey', clientAuth: { method: 'client_secret_basic', secret: { env: 'CONTOSO_SECRET' } }, scope: 'openid email profile groups', groupsClaim: 'groups' };
    const idps = nest.get(IdentityProvidersService);
    await idps.create({ id: 'contoso', displayName: 'Contoso', protocol: 'oidc', settings: common }, 'test');
    await idps.create({ id: 'contoso-ids', displayName: 'Contoso (ids)', protocol: 'oidc', settings: { ...common, groupsMatch: 'external_id' } }, 'test');
    await idps.create({ id: 'contoso-create', displayName: 'Contoso (create)', protocol: 'oidc', settings: { ...common, groupsCreate: true } }, 'test');
    const { client, secret } = await nest.get(ClientsService).create({ name: 'Payroll', redirectUris: [RP_REDIRECT_URI], scope: 'notes:read' });
    await nest.get(ClientsService).setGroupSettings(client.id, { requiredGroups: [group['Payroll Access'].id] });
    rp = await oidc.discovery(issuer, client.id, undefined, oidc.ClientSecretBasic(secret!), { execute: [oidc.allowInsecureRequests] });

    const spKeys = makeSigningKeys('latchkey-sp-groups');
    const base = `${issuer.origin}/federation/fabrikam/saml`;
    fabrikam = await SimpleSamlPhp.start({ entityId: `${base}/metadata`, acs: `${base}/acs`, slo: `${base}/slo`, signingCertificate: spKeys.cert }, { groups: ['Engineering', 'Finance', 'Unknown Team'] });
    await idps.create(
      { id: 'fabrikam', displayName: 'Fabrikam', protocol: 'saml', settings: { metadataUrl: fabrikam.metadataUrl, spSigningKey: { file: spKeys.keyFile }, spSigningCertificate: { file: spKeys.certFile }, groupsAttribute: SAML_GROUPS_ATTRIBUTE } },
      'test',
    );
  }, 60_000);

  afterAll(async () => {
    await fabrikam?.stop();
    await contoso?.stop();
    await nest?.close();
    await dropTestDatabase();
  });

  /** A sign-in through `idp` as `login` in a new browser, from our /federation/<idp>/start to where it lands here. */
  async function signIn(idp: string, login: string): Promise<Hop> {
    const browser = new FederatedBrowser();
    const upstreamForm = await browser.follow(await browser.get(new URL(`/federation/${idp}/start`, issuer)));
    const landed = await browser.signInUpstream(upstreamForm, login);
    expect(landed.url.href).toBe(`${issuer.origin}/account`);
    expect(landed.page.body).toContain('You are signed in');
    return landed;
  }

  describe('OpenID Connect: the groups claim', () => {
    it('the first sign-in joins the existing groups the upstream names, by name; an unknown group is not created, an over-long value is ignored; audited as the provider', async () => {
      const groupsBefore = await count('groups');
      await signIn('contoso', 'ana');
      const ana = await personOf('contoso', 'ana');
      expect(await groupsOf(ana)).toEqual(['Engineering']);
      expect(await count('groups')).toBe(groupsBefore);
      expect(await vouched('contoso', ana)).toEqual({ Engineering: true });
      expect(await membershipChanges('idp:contoso')).toEqual([{ subject: `group:${group.Engineering.id}`, details: { added: [{ type: 'user', id: ana }], removed: [] } }]);
    });

    it('a later sign-in with a changed claim leaves the groups no longer named and joins the new ones', async () => {
      const ana = await personOf('contoso', 'ana');
      contoso.setAccount('ana', { email: 'ana@contoso.example', email_verified: true, preferred_username: 'ana', groups: ['Staff', 'Finance'] });
      await signIn('contoso', 'ana');
      expect(await groupsOf(ana)).toEqual(['Finance', 'Staff']);
      expect(await vouched('contoso', ana)).toEqual({ Staff: true, Finance: true });
      const changes = (await membershipChanges('idp:contoso')).slice(1);
      expect(changes).toHaveLength(3);
      expect(changes).toEqual(
        expect.arrayContaining([
          { subject: `group:${group.Engineering.id}`, details: { added: [], removed: [{ type: 'user', id: ana }] } },
          { subject: `group:${group.Staff.id}`, details: { added: [{ type: 'user', id: ana }], removed: [] } },
          { subject: `group:${group.Finance.id}`, details: { added: [{ type: 'user', id: ana }], removed: [] } },
        ]),
      );
    });

    it('a membership an administrator made survives the upstream naming no group at all', async () => {
      const ana = await personOf('contoso', 'ana');
      await groups.addMembers(group['Payroll Access'].id, [{ type: 'user', id: ana }], 'cli');
      contoso.setAccount('ana', { email: 'ana@contoso.example', email_verified: true, preferred_username: 'ana', groups: [] });
      await signIn('contoso', 'ana');
      expect(await groupsOf(ana)).toEqual(['Payroll Access']);
      expect(await vouched('contoso', ana)).toEqual({});
    });

    it('a membership both the administrator and the upstream made stays when the upstream drops it', async () => {
      // Dana's first sign-in makes her; an administrator then puts her into Staff, and later the upstream names Staff too.
      contoso.setAccount('dana', { email: 'dana@contoso.example', email_verified: true, preferred_username: 'dana', groups: ['Engineering'] });
      await signIn('contoso', 'dana');
      const dana = await personOf('contoso', 'dana');
      await groups.addMembers(group.Staff.id, [{ type: 'user', id: dana }], 'cli');
      contoso.setAccount('dana', { email: 'dana@contoso.example', email_verified: true, preferred_username: 'dana', groups: ['Engineering', 'Staff'] });
      await signIn('contoso', 'dana');
      expect(await groupsOf(dana)).toEqual(['Engineering', 'Staff']);
      expect(await vouched('contoso', dana)).toEqual({ Engineering: true, Staff: false });
      contoso.setAccount('dana', { email: 'dana@contoso.example', email_verified: true, preferred_username: 'dana', groups: [] });
      await signIn('contoso', 'dana');
      expect(await groupsOf(dana)).toEqual(['Staff']);
      expect(await vouched('contoso', dana)).toEqual({});
    });

    it('a membership the upstream made and an administrator then named (CLI or SCIM) becomes the administrator\'s: it stays when the upstream drops it', async () => {
      contoso.setAccount('fern', { email: 'fern@contoso.example', email_verified: true, preferred_username: 'fern', groups: ['Engineering'] });
      await signIn('contoso', 'fern');
      const fern = await personOf('contoso', 'fern');
      expect(await vouched('contoso', fern)).toEqual({ Engineering: true });
      // Already in it: the administrator's add changes no membership, but makes it theirs.
      await groups.addMembers(group.Engineering.id, [{ type: 'user', id: fern }], 'cli');
      expect(await vouched('contoso', fern)).toEqual({ Engineering: false });
      contoso.setAccount('fern', { email: 'fern@contoso.example', email_verified: true, preferred_username: 'fern', groups: [] });
      await signIn('contoso', 'fern');
      expect(await groupsOf(fern)).toEqual(['Engineering']);
      expect(await vouched('contoso', fern)).toEqual({});
    });

    it('reads a comma-separated string as well as a list', async () => {
      await signIn('contoso', 'erin');
      expect(await groupsOf(await personOf('contoso', 'erin'))).toEqual(['Engineering', 'Finance']);
    });

    it('by external id (as Entra ID sends object ids): the group whose external id is named is joined, a name matches nothing', async () => {
      await signIn('contoso-ids', 'olga');
      const olga = await personOf('contoso-ids', 'olga');
      expect(await groupsOf(olga)).toEqual(['Operations']);
      expect(await membershipChanges('idp:contoso-ids')).toEqual([{ subject: `group:${group.Operations.id}`, details: { added: [{ type: 'user', id: olga }], removed: [] } }]);
    });

    it('with groups_create, a group the upstream names that does not exist is created (audited as the provider) and joined', async () => {
      const before = await count('groups');
      await signIn('contoso-create', 'fred');
      const fred = await personOf('contoso-create', 'fred');
      expect(await groupsOf(fred)).toEqual(['New Team', 'Staff']);
      expect(await count('groups')).toBe(before + 1);
      const created = await query<{ actor: string }>('SELECT "actor" FROM "audit_events" WHERE "action" = ? AND "subject" = ?', ['group.created', `group:${(await groups.findByName('New Team'))!.id}`]);
      expect(created).toEqual([{ actor: 'idp:contoso-create' }]);
    });

    it(`reads at most ${UPSTREAM_GROUPS_LIMIT} values: the rest are ignored, and the truncation audited`, async () => {
      await signIn('contoso', 'max');
      const max = await personOf('contoso', 'max');
      // Staff is the 501st value.
      expect(await groupsOf(max)).toEqual([]);
      const [event] = await query<{ actor: string; details: unknown }>('SELECT "actor", "details" FROM "audit_events" WHERE "action" = ? AND "subject" = ?', ['user.upstream_groups_truncated', `user:${max}`]);
      expect(event.actor).toBe('idp:contoso');
      expect(typeof event.details === 'string' ? JSON.parse(event.details) : event.details).toEqual({ idp: 'contoso', received: UPSTREAM_GROUPS_LIMIT + 1, read: UPSTREAM_GROUPS_LIMIT });
    });

    it('an answer at the callback that no sign-in in this browser awaits changes no membership', async () => {
      const before = { members: await count('group_members'), vouched: await count('upstream_group_memberships') };
      const browser = new FederatedBrowser();
      const forged = await browser.get(new URL('/federation/contoso/callback?code=stolen&state=guessed', issuer));
      expect(forged.page.status).toBe(400);
      expect({ members: await count('group_members'), vouched: await count('upstream_group_memberships') }).toEqual(before);
    });

    it('a client requiring a group lets the person in only when the upstream says they are in it (a stock relying party, through the authorization endpoint)', async () => {
      async function attempt(): Promise<{ hop: Hop; redeem: (url: URL) => Promise<oidc.TokenEndpointResponse & oidc.TokenEndpointResponseHelpers> }> {
        const browser = new FederatedBrowser();
        const verifier = oidc.randomPKCECodeVerifier();
        const nonce = oidc.randomNonce();
        const state = oidc.randomState();
        const url = oidc.buildAuthorizationUrl(rp, { redirect_uri: RP_REDIRECT_URI, scope: 'openid', nonce, state, code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', idp_hint: 'contoso' });
        const upstreamForm = await browser.follow(await browser.get(url));
        expect(upstreamForm.url.origin).toBe(contoso.issuer);
        const hop = await browser.signInUpstream(upstreamForm, 'bruno', { stopAt: RP_REDIRECT_URI });
        const redeem = (callback: URL) => oidc.authorizationCodeGrant(rp, callback, { pkceCodeVerifier: verifier, expectedNonce: nonce, expectedState: state, idTokenExpected: true });
        if (hop.page.status === 200 && hop.page.body.includes('action="/consent"')) {
          const answer = await browser.site(issuer).submit(hop.page, '/consent', { decision: 'allow' });
          return { hop: await browser.follow({ url: new URL('/consent', issuer), page: answer }, RP_REDIRECT_URI), redeem };
        }
        return { hop, redeem };
      }
      const refused = await attempt();
      expect(refused.hop.page.status).toBe(403);
      expect(refused.hop.page.body).toContain('not given you access to <strong>Payroll</strong>');
      const bruno = await personOf('contoso', 'bruno');
      expect(await groupsOf(bruno)).toEqual([]);

      contoso.setAccount('bruno', { email: 'bruno@contoso.example', email_verified: true, preferred_username: 'bruno', groups: ['Payroll Access'] });
      const admitted = await attempt();
      expect(admitted.hop.url.href.startsWith(RP_REDIRECT_URI)).toBe(true);
      const tokens = await admitted.redeem(admitted.hop.url);
      expect(tokens.claims()!.sub).toBe(bruno);
      expect(await groupsOf(bruno)).toEqual(['Payroll Access']);

      // Dropped upstream: out of the group at the next sign-in, and refused again.
      contoso.setAccount('bruno', { email: 'bruno@contoso.example', email_verified: true, preferred_username: 'bruno' });
      expect((await attempt()).hop.page.status).toBe(403);
      expect(await groupsOf(bruno)).toEqual([]);
    });
  });

  describe('SAML: the multi-valued groups attribute (SimpleSAMLphp)', () => {
    it('the first sign-in joins the existing groups named in the attribute; a later one follows the IdP\'s changes; an administrator\'s membership stays', async () => {
      const first = await signInAtSimpleSamlPhp(issuer, 'fabrikam', fabrikam);
      expect(first.done).toMatchObject({ status: 303, location: '/' });
      const ana = await personOf('fabrikam', 'ana');
      expect(await groupsOf(ana)).toEqual(['Engineering', 'Finance']);
      expect(await vouched('fabrikam', ana)).toEqual({ Engineering: true, Finance: true });
      await groups.addMembers(group.Staff.id, [{ type: 'user', id: ana }], 'cli');

      fabrikam.setGroups(['Finance', 'Payroll Access']);
      expect((await signInAtSimpleSamlPhp(issuer, 'fabrikam', fabrikam)).done).toMatchObject({ status: 303, location: '/' });
      expect(await groupsOf(ana)).toEqual(['Finance', 'Payroll Access', 'Staff']);

      // No memberOf at all: the IdP says she is in no group.
      fabrikam.setGroups([]);
      expect((await signInAtSimpleSamlPhp(issuer, 'fabrikam', fabrikam)).done).toMatchObject({ status: 303, location: '/' });
      expect(await groupsOf(ana)).toEqual(['Staff']);
      expect(await vouched('fabrikam', ana)).toEqual({});
      const changes = await membershipChanges('idp:fabrikam');
      expect(changes.map((c) => `${c.subject}:${c.details.added.length > 0 ? 'joined' : 'left'}`).sort()).toEqual(
        [`group:${group.Engineering.id}:joined`, `group:${group.Finance.id}:joined`, `group:${group.Engineering.id}:left`, `group:${group['Payroll Access'].id}:joined`, `group:${group.Finance.id}:left`, `group:${group['Payroll Access'].id}:left`].sort(),
      );
    });
  });

  describe('the settings through the admin CLI', () => {
    /** A successful run's JSON. */
    async function cliJson(...args: string[]): Promise<Record<string, unknown>> {
      const result = await runCli(args);
      expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
      return JSON.parse(result.stdout) as Record<string, unknown>;
    }
    async function refused(args: string[]): Promise<{ code: number | null; error: string }> {
      const result = await runCli(args);
      expect(result.stdout).toBe('');
      return { code: result.code, error: result.stderr.split('\n')[0] };
    }
    const settingsOf = async (id: string): Promise<unknown> => (await query<{ settings: unknown }>('SELECT "settings" FROM "identity_providers" WHERE "id" = ?', [id]))[0]?.settings;

    it('idps:create takes --groups-claim, --groups-match and --groups-create (OpenID Connect) and --groups-attribute (SAML); idps:show prints them, the defaults too', async () => {
      const created = await cliJson('idps:create', '--id', 'entra', '--protocol', 'oidc', '--issuer', 'https://login.entra.example/tenant/v2.0', '--client-id', 'latchkey', '--public-client', '--groups-claim', 'groups', '--groups-match', 'external_id');
      expect(created.settings).toMatchObject({ groupsClaim: 'groups', groupsMatch: 'external_id', groupsCreate: false });
      const saml = await cliJson('idps:create', '--id', 'adfs', '--protocol', 'saml', '--metadata-url', 'https://adfs.example/metadata.xml', '--groups-attribute', 'memberOf', '--groups-create');
      expect(saml.settings).toMatchObject({ groupsAttribute: 'memberOf', groupsMatch: 'name', groupsCreate: true });
      expect((await cliJson('idps:show', '--id', 'entra')).settings).toMatchObject({ groupsClaim: 'groups', groupsMatch: 'external_id', groupsCreate: false });
      // A provider with no groups source shows it off, with the defaults.
      expect((await cliJson('idps:show', '--id', 'contoso-ids')).settings).toMatchObject({ groupsClaim: 'groups', groupsMatch: 'external_id' });
      const plain = await cliJson('idps:create', '--id', 'plain', '--protocol', 'oidc', '--issuer', 'https://login.plain.example', '--client-id', 'latchkey', '--public-client');
      expect(plain.settings).toMatchObject({ groupsClaim: null, groupsMatch: 'name', groupsCreate: false });
    });

    it('idps:update changes them, and --no-groups turns the sync off', async () => {
      expect((await cliJson('idps:update', '--id', 'entra', '--groups-claim', 'roles', '--groups-match', 'name', '--groups-create')).settings).toMatchObject({ groupsClaim: 'roles', groupsMatch: 'name', groupsCreate: true });
      expect((await cliJson('idps:update', '--id', 'entra', '--no-groups', '--no-groups-create')).settings).toMatchObject({ groupsClaim: null, groupsCreate: false });
      expect((await cliJson('idps:update', '--id', 'adfs', '--no-groups')).settings).toMatchObject({ groupsAttribute: null });
    });

    it('refuses bad values with one clear line and exit 1; nothing changed, nothing audited', async () => {
      await cliJson('idps:update', '--id', 'entra', '--groups-claim', 'groups', '--groups-match', 'external_id', '--no-groups-create');
      const before = { entra: await settingsOf('entra'), adfs: await settingsOf('adfs'), idps: await count('identity_providers'), audit: await count('audit_events') };
      const outcomes = await Promise.all([
        refused(['idps:update', '--id', 'entra', '--groups-match', 'object_id']),
        refused(['idps:update', '--id', 'entra', '--groups-create']),
        refused(['idps:update', '--id', 'entra', '--groups-claim', 'my groups']),
        refused(['idps:update', '--id', 'entra', '--groups-attribute', 'memberOf']),
        refused(['idps:update', '--id', 'adfs', '--groups-claim', 'groups']),
        refused(['idps:update', '--id', 'entra', '--no-groups', '--groups-claim', 'groups']),
        refused(['idps:update', '--id', 'entra', '--groups-create', '--no-groups-create']),
        refused(['idps:create', '--id', 'entra-2', '--protocol', 'oidc', '--issuer', 'https://login.entra2.example', '--client-id', 'latchkey', '--public-client', '--groups-claim', 'x'.repeat(201)]),
      ]);
      expect(outcomes).toEqual([
        { code: 1, error: 'latchkey: groups_match must be name or external_id' },
        { code: 1, error: 'latchkey: groups_create needs groups_match name: a group created from an external id (an object id) would be named by it' },
        { code: 1, error: 'latchkey: groups_claim must be a claim or attribute name (printable, no spaces, at most 200 characters)' },
        { code: 1, error: 'latchkey: groupsAttribute does not apply to oidc providers' },
        { code: 1, error: 'latchkey: groupsClaim does not apply to saml providers' },
        { code: 1, error: 'latchkey: --no-groups and --groups-claim/--groups-attribute contradict each other' },
        { code: 1, error: 'latchkey: --groups-create and --no-groups-create contradict each other' },
        { code: 1, error: 'latchkey: groups_claim must be a claim or attribute name (printable, no spaces, at most 200 characters)' },
      ]);
      expect({ entra: await settingsOf('entra'), adfs: await settingsOf('adfs'), idps: await count('identity_providers'), audit: await count('audit_events') }).toEqual(before);
    });
  });
});
