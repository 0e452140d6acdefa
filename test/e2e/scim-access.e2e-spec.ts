import { randomUUID } from 'node:crypto';
import { TokensService } from '../../src/tokens/tokens.service.js';
import { Browser } from '../helpers/browser.js';
import { authorizeAsUser, authorizeUrl, introspect, newPkce, obtainCode, tokenRequest } from '../helpers/oauth-flow.js';
import { TestApp, type RegisteredClient } from '../helpers/test-app.js';
import { entra } from '../scim/entra-id.requests.js';
import { okta } from '../scim/okta.requests.js';
import { clientToken, provisioningClient, ScimConnector, type Json } from '../scim/scim-client.js';

/** Who may provision (a client's own token with `scim`), and what deprovisioning does to a person. */
describe('SCIM access and deprovisioning', () => {
  let app: TestApp;
  let scim: ScimConnector;
  let connector: RegisteredClient;

  beforeAll(async () => {
    app = await TestApp.start();
    const provisioning = await provisioningClient(app);
    connector = provisioning.client;
    scim = new ScimConnector(app, provisioning.token);
  });
  afterAll(async () => app?.stop());

  const counts = async (): Promise<number[]> =>
    Promise.all(['users', 'scim_users', 'groups', 'group_members'].map(async (table) => Number((await app.dataSource.query(`SELECT COUNT(*) AS n FROM "${table}"`))[0].n)));

  /** Every write a connector could make, with `token`; each must be refused with `status` and change nothing. */
  async function assertRefused(token: string, status: number): Promise<void> {
    const target = await scim.post('/Users', entra.createUser(`target_${randomUUID()}`, randomUUID(), 'target@example.com'));
    const group = await scim.post('/Groups', entra.createGroup(`g ${randomUUID()}`, randomUUID()));
    const before = await counts();
    const caller = new ScimConnector(app, token);
    const attempts = [
      caller.get('/Users'),
      caller.post('/Users', entra.createUser(`intruder_${randomUUID()}`, randomUUID(), 'intruder@example.com')),
      caller.patch(`/Users/${target.body.id}`, entra.disableUser()),
      caller.put(`/Users/${target.body.id}`, okta.replaceUser(target.body.id, target.body.userName, 'x')),
      caller.delete(`/Users/${target.body.id}`),
      caller.post('/Groups', entra.createGroup(`intruders ${randomUUID()}`, randomUUID())),
      caller.patch(`/Groups/${group.body.id}`, entra.addMembers(target.body.id)),
      caller.delete(`/Groups/${group.body.id}`),
      caller.request('GET', '/ServiceProviderConfig', undefined, {}, 'none'),
    ];
    for (const response of await Promise.all(attempts)) {
      expect(response.status).toBe(status);
      expect(response.body.schemas).toEqual(['urn:ietf:params:scim:api:messages:2.0:Error']);
      expect(response.headers.get('www-authenticate')).toMatch(/^Bearer /);
    }
    expect(await counts()).toEqual(before);
    expect((await scim.get(`/Users/${target.body.id}`)).body.active).toBe(true);
    expect((await scim.get(`/Groups/${group.body.id}`)).body.members).toBeUndefined();
  }

  it('refuses a request without a token, or with an unknown one (401)', async () => {
    await assertRefused('', 401);
    await assertRefused('lk_at_not-a-real-token', 401);
  });

  it('refuses a client token without the scim scope (403 insufficient_scope)', async () => {
    const other = await app.createClient({ name: 'Introspector', redirectUris: [], grantTypes: ['client_credentials'], scope: 'tokens:introspect scim' });
    await assertRefused(await clientToken(app, other, 'tokens:introspect'), 403);
  });

  it("refuses a person's token even when it holds the scim scope", async () => {
    const person = await app.createUser();
    const placeholder = app.dataSource.options.type === 'postgres' ? '$1' : '?';
    const user = (await app.dataSource.query(`SELECT "id" FROM "users" WHERE "username" = ${placeholder}`, [person.username])) as Json[];
    // No grant hands a person the scope (above): issued directly, as a token a future grant might mint by mistake.
    const issued = await app.app.get(TokensService).issue({ familyId: randomUUID(), clientId: connector.clientId, userId: user[0].id, scope: 'scim' });
    await assertRefused(issued.accessToken, 403);
  });

  it('never gives the scim scope to a client not registered for it, nor to a person at /authorize', async () => {
    const outsider = await app.createClient({ name: 'Outsider', redirectUris: [], grantTypes: ['client_credentials'], scope: 'tokens:introspect' });
    const before = await counts();
    expect((await tokenRequest(app, outsider, { grant_type: 'client_credentials', scope: 'scim' })).body.error).toBe('invalid_scope');
    const webApp = await app.createClient({ name: 'Web app', scope: 'notes:read scim' });
    const page = await authorizeAsUser(new Browser(app.baseUrl), await app.createUser(), authorizeUrl(webApp, { scope: 'scim', state: 's', code_challenge: newPkce().challenge, code_challenge_method: 'S256' }));
    expect(new URL(page.location!).searchParams.get('error')).toBe('invalid_scope');
    expect((await counts())[1]).toBe(before[1]);
  });

  it('active:false ends the sessions, revokes the tokens and refuses sign-in until reactivated', async () => {
    const userName = `deprovisioned.${randomUUID().slice(0, 8)}@example.com`;
    const password = 'correct horse battery staple';
    const created = await scim.post('/Users', { ...okta.createUserWithPassword(userName, randomUUID()), password });
    const person = { username: userName, password };
    const webApp = await app.createClient({ name: 'Notes', scope: 'notes:read' });
    const resourceServer = await app.createClient({ name: 'RS', redirectUris: [], grantTypes: ['client_credentials'], scope: 'tokens:introspect' });
    const browser = new Browser(app.baseUrl);
    const signedIn = await authorizeAsUser(browser, person, authorizeUrl(webApp, { scope: 'notes:read', state: 's', code_challenge: newPkce().challenge, code_challenge_method: 'S256' }));
    expect(new URL(signedIn.location!).searchParams.get('code')).toBeTruthy();
    const { code, pkce } = await obtainCode(app, webApp, person);
    const tokens = await tokenRequest(app, webApp, { grant_type: 'authorization_code', code, code_verifier: pkce.verifier, redirect_uri: webApp.redirectUri });
    const accessToken = tokens.body.access_token as string;
    const api = async (): Promise<number> => (await fetch(app.url('/api/v1/notes'), { headers: { authorization: `Bearer ${accessToken}` } })).status;
    expect(await api()).toBe(200);
    const sessions = async (): Promise<number> => Number((await app.dataSource.query(`SELECT COUNT(*) AS n FROM "sessions" WHERE "user_id" = '${created.body.id}' AND "ended_at" IS NULL`))[0].n);
    expect(await sessions()).toBeGreaterThan(0);

    expect((await scim.patch(`/Users/${created.body.id}`, entra.disableUser())).body.active).toBe(false);
    expect(await api()).toBe(401);
    expect((await introspect(app, resourceServer, accessToken)).active).toBe(false);
    expect(await sessions()).toBe(0);
    // The browser that was signed in is asked to sign in again, and the password no longer works.
    const again = await authorizeAsUser(browser, person, authorizeUrl(webApp, { scope: 'notes:read', state: 's', code_challenge: newPkce().challenge, code_challenge_method: 'S256' })).catch((error: Error) => error);
    expect(again instanceof Error ? again.message : String(again.status)).toMatch(/Login failed|200/);
    const audit = (await app.dataSource.query(`SELECT "action", "actor" FROM "audit_events" WHERE "subject" = 'user:${created.body.id}'`)) as Json[];
    expect(audit).toEqual(expect.arrayContaining([{ action: 'scim.user.created', actor: `client:${connector.clientId}` }, { action: 'user.deactivated', actor: `client:${connector.clientId}` }]));

    expect((await scim.patch(`/Users/${created.body.id}`, okta.reactivate())).body.active).toBe(true);
    const back = await authorizeAsUser(new Browser(app.baseUrl), person, authorizeUrl(webApp, { scope: 'notes:read', state: 's', code_challenge: newPkce().challenge, code_challenge_method: 'S256' }));
    expect(new URL(back.location!).searchParams.get('code')).toBeTruthy();
    // The old token stays revoked.
    expect(await api()).toBe(401);
  });

  it('a password the directory sets (PATCH password) ends the person\'s sessions, as any password change does; the new one works', async () => {
    const userName = `rekeyed.${randomUUID().slice(0, 8)}@example.com`;
    const person = { username: userName, password: 'correct horse battery staple' };
    const created = await scim.post('/Users', { ...okta.createUserWithPassword(userName, randomUUID()), password: person.password });
    const webApp = await app.createClient({ name: 'Notes', scope: 'notes:read' });
    await authorizeAsUser(new Browser(app.baseUrl), person, authorizeUrl(webApp, { scope: 'notes:read', state: 's', code_challenge: newPkce().challenge, code_challenge_method: 'S256' }));
    const sessions = async (): Promise<number> => Number((await app.dataSource.query(`SELECT COUNT(*) AS n FROM "sessions" WHERE "user_id" = '${created.body.id}' AND "ended_at" IS NULL`))[0].n);
    expect(await sessions()).toBe(1);
    const changed = await scim.patch(`/Users/${created.body.id}`, { schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: [{ op: 'replace', path: 'password', value: 'a brand new passphrase' }] });
    expect(changed.status).toBe(200);
    expect(await sessions()).toBe(0);
    const back = await authorizeAsUser(new Browser(app.baseUrl), { username: userName, password: 'a brand new passphrase' }, authorizeUrl(webApp, { scope: 'notes:read', state: 's', code_challenge: newPkce().challenge, code_challenge_method: 'S256' }));
    expect(new URL(back.location!).searchParams.get('code')).toBeTruthy();
  });

  it('DELETE ends the sessions and deletes the person', async () => {
    const userName = `deleted.${randomUUID().slice(0, 8)}@example.com`;
    const created = await scim.post('/Users', { ...okta.createUserWithPassword(userName, randomUUID()), password: 'correct horse battery staple' });
    expect((await scim.delete(`/Users/${created.body.id}`)).status).toBe(204);
    expect(Number((await app.dataSource.query(`SELECT COUNT(*) AS n FROM "users" WHERE "id" = '${created.body.id}'`))[0].n)).toBe(0);
    expect(Number((await app.dataSource.query(`SELECT COUNT(*) AS n FROM "scim_users" WHERE "user_id" = '${created.body.id}'`))[0].n)).toBe(0);
  });

  it('never returns a password hash or anything of the second factors', async () => {
    const created = await scim.post('/Users', okta.createUserWithPassword(`secret.${randomUUID().slice(0, 8)}@example.com`, randomUUID()));
    const everything = JSON.stringify([created.body, (await scim.get('/Users?count=100')).body, (await scim.request('GET', `/Users/${created.body.id}?attributes=password`, undefined, {}, 'none')).body]);
    expect(everything).not.toMatch(/argon2|password|passwordHash|totp|passkey|recovery/i);
  });
});
