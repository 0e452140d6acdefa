/**
 * Issue 46, groups: the `groups` claim a client opts in to (names or ids) in the ID token,
 * userinfo, introspection and the JWT access token; the client's group rule (only members of its
 * required groups sign in), enforced in the authentication policy and at the refresh grant; nested
 * groups; cycles refused. The real app on a real port, over HTTP.
 */
import { jest } from '@jest/globals';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createRemoteJWKSet, decodeJwt, jwtVerify, type JWTPayload } from 'jose';
import { JWKS_PATH } from '../../src/auth/metadata/metadata.service.js';
import { ClientsService } from '../../src/clients/clients.service.js';
import { DomainError } from '../../src/common/domain-error.js';
import { GroupStore } from '../../src/groups/group.store.js';
import { GroupsService } from '../../src/groups/groups.service.js';
import type { Group } from '../../src/groups/group.entity.js';
import { ResourceServersService } from '../../src/resource-servers/resource-servers.service.js';
import { UsersService } from '../../src/users/users.service.js';
import { startAtIssuer } from '../helpers/app-at-issuer.js';
import { Browser, isLoginPage, type Page } from '../helpers/browser.js';
import { authorizeAsUser, newPkce } from '../helpers/oauth-flow.js';
import type { TestUser } from '../helpers/test-app.js';
import { dropTestDatabase } from '../helpers/test-database.js';
import { postForm, resourceParams, type FormClient } from '../helpers/form-post.js';

const LEDGER = 'https://ledger.example.com/v2';
const PASSWORD = 'correct horse battery staple';

interface Registered extends FormClient {
  redirectUri: string;
}

describe('groups: the groups claim and the clients\' group rule (issue 46)', () => {
  let nest: NestFastifyApplication;
  let issuer: URL;
  let groups: GroupsService;
  const people: Record<string, TestUser & { id: string }> = {};
  let engineering: Group;
  let platform: Group;
  /** Requires Engineering; groups claim by name. */
  let wiki: Registered;
  /** No rule; groups claim by id. */
  let tracker: Registered;
  /** Neither: the groups claim is off. */
  let plain: Registered;
  let introspector: Registered;

  async function token(form: [string, string][], client: Registered): Promise<Record<string, unknown>> {
    const reply = await postForm(issuer, '/token', form, client);
    if (reply.status !== 200) throw new Error(`/token answered ${reply.status}: ${JSON.stringify(reply.body)}`);
    return reply.body;
  }

  function authorizeUrl(client: Registered, extra: Record<string, string> = {}, resources: readonly string[] = []): { url: URL; verifier: string } {
    const pkce = newPkce();
    const url = new URL('/authorize', issuer);
    const params = { client_id: client.id, response_type: 'code', redirect_uri: client.redirectUri, scope: 'openid profile notes:read', state: 'st-46', nonce: 'n', code_challenge: pkce.challenge, code_challenge_method: 'S256', ...extra };
    for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
    for (const resource of resources) url.searchParams.append('resource', resource);
    return { url, verifier: pkce.verifier };
  }

  /** Sign-in, consent, code, tokens. */
  async function codeFlow(client: Registered, person: TestUser, resources: readonly string[] = [], browser = new Browser(issuer.origin)): Promise<Record<string, unknown>> {
    const { url, verifier } = authorizeUrl(client, {}, resources);
    const page = await authorizeAsUser(browser, person, url.href);
    const code = page.location ? new URL(page.location).searchParams.get('code') : null;
    if (!code) throw new Error(`No code: ${page.status} ${page.location ?? page.body}`);
    return token([['grant_type', 'authorization_code'], ['code', code], ['redirect_uri', client.redirectUri], ['code_verifier', verifier], ...resourceParams(resources)], client);
  }

  async function userinfo(accessToken: unknown): Promise<Record<string, unknown>> {
    const response = await fetch(new URL('/userinfo', issuer), { headers: { authorization: `Bearer ${String(accessToken)}` } });
    expect(response.status).toBe(200);
    return (await response.json()) as Record<string, unknown>;
  }

  async function introspect(value: unknown): Promise<Record<string, unknown>> {
    const reply = await postForm(issuer, '/introspect', [['token', String(value)]], introspector);
    expect(reply.status).toBe(200);
    return reply.body;
  }

  async function verifiedAtLedger(jwt: unknown): Promise<JWTPayload> {
    const jwks = createRemoteJWKSet(new URL(JWKS_PATH, issuer));
    return (await jwtVerify(String(jwt), jwks, { issuer: issuer.href.replace(/\/$/, ''), audience: LEDGER, typ: 'at+jwt', algorithms: ['RS256'] })).payload;
  }

  beforeAll(async () => {
    ({ nest, issuer } = await startAtIssuer({ RATE_LIMIT_CLIENT_PER_MINUTE: '0', RATE_LIMIT_API_PER_MINUTE: '0', LOGIN_THROTTLE_ENABLED: 'false' }));
    groups = nest.get(GroupsService);
    for (const username of ['alice', 'bob', 'carol']) people[username] = { username, password: PASSWORD, id: (await nest.get(UsersService).create(username, PASSWORD)).id };
    // Alice is in Engineering; Bob in Platform, which is in Engineering; Carol in neither.
    platform = await groups.create({ displayName: 'Platform', members: [{ type: 'user', id: people.bob.id }] }, 'test');
    engineering = await groups.create({ displayName: 'Engineering', members: [{ type: 'user', id: people.alice.id }, { type: 'group', id: platform.id }] }, 'test');
    const clients = nest.get(ClientsService);
    const create = async (name: string, redirectUri: string, scope = 'openid profile notes:read'): Promise<Registered> => {
      const created = await clients.create({ name, redirectUris: [redirectUri], scope, grantTypes: ['authorization_code', 'refresh_token', 'password'] as never });
      return { id: created.client.id, secret: created.secret!, redirectUri };
    };
    wiki = await create('Wiki', 'https://wiki.example/cb');
    tracker = await create('Tracker', 'https://tracker.example/cb');
    plain = await create('Plain', 'https://plain.example/cb');
    const rs = await clients.create({ name: 'Ledger RS', redirectUris: [], scope: 'tokens:introspect', grantTypes: ['client_credentials'] as never });
    introspector = { id: rs.client.id, secret: rs.secret!, redirectUri: '' };
    await nest.get(ResourceServersService).register({ uri: LEDGER, name: 'Ledger', accessTokenFormat: 'jwt', introspector: introspector.id }, 'test');
    await clients.setGroupSettings(wiki.id, { groupsClaim: 'names', requiredGroups: [engineering.id] });
    await clients.setGroupSettings(tracker.id, { groupsClaim: 'ids' });
  });

  afterAll(async () => {
    await nest?.close();
    await dropTestDatabase();
  });

  it('a member signs in and the groups claim (names) is in the ID token, userinfo, introspection and the JWT access token', async () => {
    const tokens = await codeFlow(wiki, people.alice);
    expect(decodeJwt(String(tokens.id_token)).groups).toEqual(['Engineering']);
    expect(await userinfo(tokens.access_token)).toMatchObject({ groups: ['Engineering'] });
    expect(await introspect(tokens.access_token)).toMatchObject({ active: true, groups: ['Engineering'] });
    expect(await introspect(tokens.refresh_token)).toMatchObject({ active: true, groups: ['Engineering'] });

    const forLedger = await codeFlow(wiki, people.alice, [LEDGER]);
    const jwt = await verifiedAtLedger(forLedger.access_token);
    expect(jwt).toMatchObject({ client_id: wiki.id, groups: ['Engineering'] });
    expect(jwt.groups_overflow).toBeUndefined();
  });

  it('nested membership counts: Bob, in Platform, is in Engineering too; the ids variant names both groups by id, in name order', async () => {
    const viaNesting = await codeFlow(wiki, people.bob);
    expect(decodeJwt(String(viaNesting.id_token)).groups).toEqual(['Engineering', 'Platform']);

    const tokens = await codeFlow(tracker, people.bob, [LEDGER]);
    expect(decodeJwt(String(tokens.id_token)).groups).toEqual([engineering.id, platform.id]);
    expect((await verifiedAtLedger(tokens.access_token)).groups).toEqual([engineering.id, platform.id]);
    expect(await introspect(tokens.access_token)).toMatchObject({ active: true, groups: [engineering.id, platform.id] });
    // A person in no group gets an empty list from a client that opted in: the claim says "none", not "unknown".
    const carol = await codeFlow(tracker, people.carol);
    expect(decodeJwt(String(carol.id_token)).groups).toEqual([]);
    expect(await userinfo(carol.access_token)).toMatchObject({ groups: [] });
  });

  it('a client that did not opt in gets no groups claim anywhere, and its token endpoint runs no groups query', async () => {
    const store = nest.get(GroupStore, { strict: false });
    const walks = jest.spyOn(store, 'effectiveGroupsOf');
    try {
      const { url, verifier } = authorizeUrl(plain);
      const page = await authorizeAsUser(new Browser(issuer.origin), people.alice, url.href);
      const code = new URL(page.location!).searchParams.get('code')!;
      walks.mockClear();
      const tokens = await token([['grant_type', 'authorization_code'], ['code', code], ['redirect_uri', plain.redirectUri], ['code_verifier', verifier]], plain);
      const refreshed = await token([['grant_type', 'refresh_token'], ['refresh_token', String(tokens.refresh_token)]], plain);
      expect(walks).not.toHaveBeenCalled();
      expect(decodeJwt(String(tokens.id_token)).groups).toBeUndefined();
      expect(decodeJwt(String(refreshed.id_token)).groups).toBeUndefined();
      expect((await userinfo(tokens.access_token)).groups).toBeUndefined();
      expect((await introspect(tokens.access_token)).groups).toBeUndefined();

      // One that did: one walk (a recursive query) per claim issued, here the ID token's.
      const opted = authorizeUrl(tracker);
      const optedPage = await authorizeAsUser(new Browser(issuer.origin), people.alice, opted.url.href);
      walks.mockClear();
      await token([['grant_type', 'authorization_code'], ['code', new URL(optedPage.location!).searchParams.get('code')!], ['redirect_uri', tracker.redirectUri], ['code_verifier', opted.verifier]], tracker);
      expect(walks).toHaveBeenCalledTimes(1);
    } finally {
      walks.mockRestore();
    }
  });

  describe('the client\'s group rule', () => {
    async function noAccessPage(browser: Browser, person: TestUser): Promise<{ page: Page; url: URL }> {
      const { url } = authorizeUrl(wiki);
      let page = await browser.get(url.href);
      expect(isLoginPage(page)).toBe(true);
      const afterLogin = await browser.submit(page, '/login', { username: person.username, password: person.password });
      expect(afterLogin.status).toBe(303);
      page = await browser.get(afterLogin.location!);
      return { page, url };
    }

    it('a non-member sees a clear 403 page; its button sends the client access_denied with its state and iss; nothing is issued', async () => {
      const browser = new Browser(issuer.origin);
      const { page } = await noAccessPage(browser, people.carol);
      expect(page.status).toBe(403);
      expect(page.body).toContain('Your organization has not given you access to <strong>Wiki</strong>');
      expect(page.body).toContain('Signed in as <strong>carol</strong>');
      expect(page.body).toContain('Sign in as someone else');

      const back = await browser.submit(page, '/consent', { decision: 'deny' });
      expect(back.status).toBe(303);
      const location = new URL(back.location!);
      expect(location.origin + location.pathname).toBe(wiki.redirectUri);
      expect(Object.fromEntries(location.searchParams)).toMatchObject({ error: 'access_denied', state: 'st-46', iss: issuer.href.replace(/\/$/, '') });
      expect(location.searchParams.get('code')).toBeNull();

      // Even a forged "allow" on the consent form gets no code for her.
      const forged = await browser.submit(page, '/consent', { decision: 'allow' });
      expect(new URL(forged.location!).searchParams.get('error')).toBe('access_denied');
    });

    it('"Sign in as someone else" leads to the sign-in page, and a member signing in there gets through', async () => {
      const browser = new Browser(issuer.origin);
      const { page } = await noAccessPage(browser, people.carol);
      const link = /<a href="([^"]+)" id="switch-account">/.exec(page.body)![1].replace(/&amp;/g, '&');
      const login = await browser.get(link);
      expect(isLoginPage(login)).toBe(true);
      const afterLogin = await browser.submit(login, '/login', { username: 'alice', password: PASSWORD });
      let next = await browser.get(afterLogin.location!);
      if (next.body.includes('action="/consent"')) next = await browser.submit(next, '/consent', { decision: 'allow' });
      expect(new URL(next.location!).searchParams.get('code')).toMatch(/.+/);
    });

    it('prompt=none for a signed-in non-member: access_denied to the client, no page', async () => {
      const browser = new Browser(issuer.origin);
      await noAccessPage(browser, people.carol);
      const { url } = authorizeUrl(wiki, { prompt: 'none' });
      const page = await browser.get(url.href);
      expect(page.status).toBe(302);
      const location = new URL(page.location!);
      expect(location.searchParams.get('error')).toBe('access_denied');
      expect(location.searchParams.get('state')).toBe('st-46');
    });

    it('taken out of the group, the person\'s next refresh is refused (invalid_grant); put back, the same refresh token works', async () => {
      const dave = { username: 'dave', password: PASSWORD, id: (await nest.get(UsersService).create('dave', PASSWORD)).id };
      await groups.addMembers(platform.id, [{ type: 'user', id: dave.id }], 'test');
      const tokens = await codeFlow(wiki, dave);
      const first = await token([['grant_type', 'refresh_token'], ['refresh_token', String(tokens.refresh_token)]], wiki);
      expect(decodeJwt(String(first.id_token)).groups).toEqual(['Engineering', 'Platform']);

      await groups.removeMembers(platform.id, [{ type: 'user', id: dave.id }], 'test');
      const refused = await postForm(issuer, '/token', [['grant_type', 'refresh_token'], ['refresh_token', String(first.refresh_token)]], wiki);
      expect(refused.status).toBe(400);
      expect(refused.body).toMatchObject({ error: 'invalid_grant' });
      expect(String(refused.body.error_description)).toMatch(/no longer, in a group this application requires/);

      await groups.addMembers(engineering.id, [{ type: 'user', id: dave.id }], 'test');
      const again = await token([['grant_type', 'refresh_token'], ['refresh_token', String(first.refresh_token)]], wiki);
      expect(decodeJwt(String(again.id_token)).groups).toEqual(['Engineering']);
    });
  });

  it('the password grant, which no page guards, holds a non-member to the rule too', async () => {
    const refusedGrant = await postForm(issuer, '/token', [['grant_type', 'password'], ['username', 'carol'], ['password', PASSWORD], ['scope', 'notes:read']], wiki);
    expect(refusedGrant.status).toBe(400);
    expect(refusedGrant.body).toMatchObject({ error: 'invalid_grant' });
    const granted = await token([['grant_type', 'password'], ['username', 'alice'], ['password', PASSWORD], ['scope', 'notes:read']], wiki);
    expect(await introspect(granted.access_token)).toMatchObject({ active: true, groups: ['Engineering'] });
  });

  describe('GroupsService rules', () => {
    it('refuses a cycle (a group in itself, or in a group it holds) and leaves the members as they were', async () => {
      const before = await groups.members(platform.id);
      await expect(groups.addMembers(platform.id, [{ type: 'group', id: engineering.id }], 'test')).rejects.toMatchObject({ code: 'group_cycle' });
      await expect(groups.addMembers(platform.id, [{ type: 'group', id: platform.id }], 'test')).rejects.toMatchObject({ code: 'group_cycle' });
      await expect(groups.setMembers(platform.id, [...before, { type: 'group', id: engineering.id }], 'test')).rejects.toBeInstanceOf(DomainError);
      const inner = await groups.create({ displayName: 'Platform SRE' }, 'test');
      await groups.addMembers(platform.id, [{ type: 'group', id: inner.id }], 'test');
      // Three levels: Engineering > Platform > Platform SRE; the innermost cannot hold the outermost.
      await expect(groups.addMembers(inner.id, [{ type: 'group', id: engineering.id }], 'test')).rejects.toMatchObject({ code: 'group_cycle' });
      expect(await groups.members(inner.id)).toEqual([]);
      await groups.removeMembers(platform.id, [{ type: 'group', id: inner.id }], 'test');
      expect(await groups.members(platform.id)).toEqual(before);
      await groups.delete(inner.id, 'test');
    });

    it('names taken, unknown members and malformed ids are clear errors; findById of a malformed id is null', async () => {
      await expect(groups.create({ displayName: 'Engineering' }, 'test')).rejects.toMatchObject({ code: 'group_name_taken' });
      await expect(groups.create({ displayName: '   ' }, 'test')).rejects.toMatchObject({ code: 'invalid_group' });
      await expect(groups.create({ displayName: 'Ghosts', members: [{ type: 'user', id: '018f0000-0000-7000-8000-000000000000' }] }, 'test')).rejects.toMatchObject({ code: 'member_not_found' });
      expect(await groups.findByName('Ghosts')).toBeNull();
      await expect(groups.addMembers(engineering.id, [{ type: 'user', id: 'not-a-uuid' }], 'test')).rejects.toMatchObject({ code: 'member_not_found' });
      await expect(groups.update(platform.id, { displayName: 'Engineering' }, 'test')).rejects.toMatchObject({ code: 'group_name_taken' });
      expect(await groups.findById('not-a-uuid')).toBeNull();
      expect(await groups.findById("'; DROP TABLE groups; --")).toBeNull();
      await expect(groups.delete('018f0000-0000-7000-8000-000000000000', 'test')).rejects.toMatchObject({ code: 'group_not_found' });
    });

    it('adding is idempotent; direct and effective groups differ for nested members; changes are audited', async () => {
      await groups.addMembers(engineering.id, [{ type: 'user', id: people.alice.id }], 'test');
      expect((await groups.members(engineering.id)).filter((m) => m.id === people.alice.id)).toHaveLength(1);
      expect((await groups.directGroupsOf(people.bob.id)).map((g) => g.displayName)).toEqual(['Platform']);
      expect((await groups.groupsOf(people.bob.id)).map((g) => g.displayName)).toEqual(['Engineering', 'Platform']);
      const { AuditService } = await import('../../src/audit/audit.service.js');
      const events = await nest.get(AuditService).list(200);
      const actions = new Set(events.filter((e) => e.subject === `group:${engineering.id}`).map((e) => e.action));
      expect(actions).toEqual(new Set(['group.created', 'group.members_changed']));
    });
  });
});
