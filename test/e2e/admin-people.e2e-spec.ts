/**
 * Issue 48: the admin API's people. Every change is refused without a token, with a token lacking
 * the scope and for a person without a role, the tables unchanged; an administrator is an owner's
 * to change, except their sessions (AdministratorProtection); nobody locks or deletes themselves or
 * the last active owner; every change is audited with who and from where; lists page; malformed
 * input is a 4xx with `error`, never a 500.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { AdminRolesService } from '../../src/admin/admin-roles.service.js';
import { PasskeyStore } from '../../src/factors/passkey.store.js';
import { UsersService } from '../../src/users/users.service.js';
import { AdminApi, signInThrough, tableSnapshot, type AdminResponse } from '../helpers/admin-api.js';
import { TestApp, type RegisteredClient, type TestUser } from '../helpers/test-app.js';

const TABLES = ['users', 'sessions', 'session_clients', 'consents', 'tokens', 'authorization_codes', 'passkeys', 'recovery_codes', 'totp_factors', 'audit_events', 'email_links', 'admin_roles', 'logout_deliveries'];
const PASSWORD = 'correct horse battery staple';

interface Person {
  id: string;
  user: TestUser;
  passkeyId: string;
  sessionId: string;
}

describe('admin API: people', () => {
  let app: TestApp;
  let admin: AdminApi;
  let rp: RegisteredClient;

  beforeAll(async () => {
    app = await TestApp.start();
    admin = await AdminApi.setUp(app);
    rp = await app.createClient({ name: 'Notes', scope: 'openid notes:read' });
  });
  afterAll(() => app?.stop());

  const idOf = async (username: string) => (await app.app.get(UsersService).require(username)).id;
  const addPasskey = async (userId: string): Promise<string> => {
    const id = randomUUID();
    await app.app.get(PasskeyStore).insert({ id, userId, credentialId: randomBytes(32).toString('base64url'), publicKey: randomBytes(77).toString('base64url'), counter: 0, transports: ['internal'], backupEligible: false, backedUp: false, name: 'Laptop', createdAt: new Date(), lastUsedAt: null });
    return id;
  };

  /** A person signed in to `rp` (a session, a consent, tokens) with a passkey: something to change for every route. */
  async function person(): Promise<Person> {
    const user = await app.createUser();
    const id = await idOf(user.username);
    await signInThrough(app, rp, user, 'openid notes:read');
    const [{ public_id: sessionId }] = (await app.dataSource.query(`SELECT "public_id" FROM "sessions" WHERE "user_id" = '${id}'`)) as { public_id: string }[];
    return { id, user, passkeyId: await addPasskey(id), sessionId };
  }

  /** Every route that changes something, aimed at `p`. */
  const changes = (p: Person): [string, string, unknown?][] => [
    ['POST', '/people', { username: `new_${randomUUID().slice(0, 8)}`, password: PASSWORD }],
    ['PATCH', `/people/${p.id}`, { name: 'Changed' }],
    ['DELETE', `/people/${p.id}`],
    ['PUT', `/people/${p.id}/password`, { password: 'another long password' }],
    ['DELETE', `/people/${p.id}/factors`],
    ['DELETE', `/people/${p.id}/passkeys/${p.passkeyId}`],
    ['PUT', `/people/${p.id}/lock`],
    ['DELETE', `/people/${p.id}/lock`],
    ['POST', `/people/${p.id}/invitation`],
    ['DELETE', `/people/${p.id}/sessions`],
    ['DELETE', `/people/${p.id}/sessions/${p.sessionId}`],
    ['DELETE', `/people/${p.id}/grants/${rp.clientId}`],
  ];

  const auditOf = async (userId: string) =>
    ((await app.dataSource.query(`SELECT "actor", "ip", "action", "details" FROM "audit_events" WHERE "subject" = 'user:${userId}' ORDER BY "id"`)) as { actor: string; ip: string | null; action: string; details: string }[]).map((e) => ({ ...e, details: JSON.parse(e.details) as Record<string, unknown> }));

  it('refuses every change without a token (401), with admin:read (403), for a person without a role and for a service client holding admin:read; nothing changes', async () => {
    const target = await person();
    const auditor = await admin.signIn(['auditor']);
    const nobody = await admin.signIn([]);
    const service = await admin.serviceToken('admin:read');
    const before = await tableSnapshot(app.dataSource, TABLES);
    for (const [method, path, body] of changes(target)) {
      const anonymous = await admin.request(method, path, undefined, body);
      expect([method, path, anonymous.status, anonymous.headers.get('www-authenticate')?.startsWith('Bearer')]).toEqual([method, path, 401, true]);
      for (const token of [auditor.token, nobody.token, service.token]) {
        const refused = await admin.request(method, path, token, body);
        expect([method, path, refused.status, refused.body.error]).toEqual([method, path, 403, 'insufficient_scope']);
      }
    }
    expect(await tableSnapshot(app.dataSource, TABLES)).toBe(before);
  });

  it('a help desk resets the factors and ends the sessions of an ordinary person; of an owner only the sessions (403 forbidden otherwise, nothing changed)', async () => {
    const helpdesk = await admin.signIn(['helpdesk']);
    const ordinary = await person();
    expect((await admin.request('DELETE', `/people/${ordinary.id}/factors`, helpdesk.token)).body).toEqual({ one_time_codes_removed: false, recovery_codes_removed: 0, passkeys_removed: 1 });
    expect((await admin.request('DELETE', `/people/${ordinary.id}/sessions`, helpdesk.token)).body).toEqual({ sessions_ended: 1 });

    const owner = await person();
    await app.app.get(AdminRolesService).grant(owner.id, 'owner', 'cli');
    const before = await tableSnapshot(app.dataSource, TABLES);
    for (const [method, path, body] of changes(owner).filter(([, path]) => path !== '/people' && !path.includes('/sessions'))) {
      const refused = await admin.request(method, path, helpdesk.token, body);
      expect([method, path, refused.status, refused.body.error]).toEqual([method, path, 403, 'forbidden']);
      expect(refused.body.error_description).toMatch(/is an administrator \(owner\): only an owner may/);
    }
    expect(await tableSnapshot(app.dataSource, TABLES)).toBe(before);
    expect((await admin.request('DELETE', `/people/${owner.id}/sessions/${owner.sessionId}`, helpdesk.token)).status).toBe(204);
  });

  it('nobody locks or deletes themselves (403); the last active owner is never locked or deleted (409); nothing changes', async () => {
    const roles = app.app.get(AdminRolesService);
    for (const grant of await roles.list()) if (grant.role === 'owner') await roles.revoke(grant.userId, 'owner', 'cli', { allowNoOwner: true });
    const owner = await admin.signIn(['owner']);
    const automation = await admin.serviceToken('admin:owner');
    const before = await tableSnapshot(app.dataSource, TABLES);
    for (const method of ['PUT', 'DELETE']) {
      const path = method === 'PUT' ? `/people/${owner.userId}/lock` : `/people/${owner.userId}`;
      const self = await admin.request(method, path, owner.token);
      expect([self.status, self.body.error, self.body.error_description]).toEqual([403, 'forbidden', expect.stringMatching(/yourself/)]);
      const last = await admin.request(method, path, automation.token);
      expect([last.status, last.body.error, last.body.error_description]).toEqual([409, 'conflict', expect.stringMatching(/last active owner/)]);
    }
    expect(await tableSnapshot(app.dataSource, TABLES)).toBe(before);
    // With a second owner, the first may be locked, and unlocked again.
    await admin.signIn(['owner']);
    expect((await admin.request('PUT', `/people/${owner.userId}/lock`, automation.token)).body).toMatchObject({ active: false });
    expect((await admin.request('DELETE', `/people/${owner.userId}/lock`, automation.token)).status).toBe(204);
  });

  it('an owner creates, reads, changes, locks and deletes a person; each change audited with the owner and their address; no secret is shown', async () => {
    const owner = await admin.signIn(['owner']);
    const username = `ann_${randomUUID().slice(0, 8)}`;
    const created = await admin.request('POST', '/people', owner.token, { username, email: 'Ann@Example.org', name: 'Ann Example' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ username, email: 'Ann@Example.org', email_verified: false, has_password: false, active: true });
    const id = String(created.body.id);
    expect(created.headers.get('location')).toBe(`/admin/api/v1/people/${id}`);

    const patched = await admin.request('PATCH', `/people/${id}`, owner.token, JSON.stringify({ name: null, given_name: 'Ann', require_mfa: true }), 'application/merge-patch+json');
    expect(patched.body).toMatchObject({ name: null, given_name: 'Ann', require_mfa: true, email: 'Ann@Example.org' });
    expect((await admin.request('PUT', `/people/${id}/password`, owner.token, { password: PASSWORD })).status).toBe(204);
    expect(await app.app.get(UsersService).authenticate(username, PASSWORD)).not.toBeNull();

    const passkeyId = await addPasskey(id);
    const shown = await admin.request('GET', `/people/${id}`, owner.token);
    expect(shown.body).toMatchObject({ id, username, has_password: true, roles: [], factors: { totp: { enabled: false }, recovery_codes: { remaining: 0 }, passkeys: [{ id: passkeyId, name: 'Laptop', blocked: false }] } });
    const [stored] = (await app.dataSource.query(`SELECT "password_hash", "public_key", "credential_id" FROM "users" JOIN "passkeys" ON "passkeys"."user_id" = "users"."id" WHERE "users"."id" = '${id}'`)) as Record<string, string>[];
    for (const secret of Object.values(stored)) expect(JSON.stringify(shown.body)).not.toContain(secret);

    expect((await admin.request('DELETE', `/people/${id}/passkeys/${passkeyId}`, owner.token)).status).toBe(204);
    expect((await admin.request('DELETE', `/people/${id}/passkeys/${passkeyId}`, owner.token)).status).toBe(404);
    expect((await admin.request('PUT', `/people/${id}/lock`, owner.token)).body).toEqual({ active: false, sessions_ended: 0, tokens_revoked: 0 });
    expect((await admin.request('GET', `/people/${id}`, owner.token)).body.active).toBe(false);
    expect((await admin.request('DELETE', `/people/${id}/lock`, owner.token)).status).toBe(204);
    expect((await admin.request('DELETE', `/people/${id}`, owner.token)).status).toBe(204);
    expect((await admin.request('GET', `/people/${id}`, owner.token)).status).toBe(404);

    const events = await auditOf(id);
    expect(events.map((e) => e.action)).toEqual(['user.created', 'user.updated', 'user.password_set', 'passkey.removed', 'user.deactivated', 'user.reactivated', 'user.deleted']);
    expect(events.every((e) => e.actor === `user:${owner.userId}` && e.ip === '127.0.0.1')).toBe(true);
    expect(events[1].details).toMatchObject({ changed: ['name', 'given_name', 'require_mfa'] });
  });

  it('answers malformed ids, bodies and queries with a 4xx naming the error, never a 500; nothing changes', async () => {
    const owner = await admin.signIn(['owner']);
    const target = await person();
    const before = await tableSnapshot(app.dataSource, TABLES);
    const cases: [string, string, unknown, number, string?][] = [
      ['GET', '/people/not-a-uuid', undefined, 404],
      ['GET', `/people/${randomUUID()}`, undefined, 404],
      ['PATCH', `/people/${randomUUID()}`, { name: 'X' }, 404],
      ['PATCH', `/people/${target.id}`, { nickname: 'X' }, 400],
      ['PATCH', `/people/${target.id}`, { email_verified: 'yes' }, 400],
      ['PATCH', `/people/${target.id}`, { email: 'not an address' }, 400],
      ['PATCH', `/people/${target.id}`, {}, 400],
      ['PATCH', `/people/${target.id}`, '[1, 2]', 400],
      ['PATCH', `/people/${target.id}`, '{"name": "X"', 400],
      ['POST', '/people', { password: PASSWORD }, 400],
      ['POST', '/people', { username: 'bad name!', password: PASSWORD }, 400],
      ['POST', '/people', { username: target.user.username, password: PASSWORD }, 409],
      ['POST', '/people', { username: 'short_pw', password: 'short' }, 400],
      ['PUT', `/people/${target.id}/password`, { password: 42 }, 400],
      ['PUT', `/people/${target.id}/password`, { password: PASSWORD, extra: true }, 400],
      ['DELETE', `/people/${target.id}/passkeys/not-a-passkey`, undefined, 404],
      ['DELETE', `/people/${target.id}/sessions/not-a-session`, undefined, 404],
      ['DELETE', `/people/${target.id}/sessions/${randomUUID()}`, undefined, 404],
      ['DELETE', `/people/${target.id}/grants/no-such-client`, undefined, 404],
      ['GET', '/people?active=maybe', undefined, 400],
      ['GET', '/people?role=root', undefined, 400],
      ['GET', '/people?limit=0', undefined, 400],
      ['GET', '/people?cursor=not-ours', undefined, 400],
      ['GET', `/people/${target.id}/sessions?cursor=${Buffer.from(JSON.stringify(['yesterday', 'x'])).toString('base64url')}`, undefined, 400],
    ];
    for (const [method, path, body, status] of cases) {
      const response: AdminResponse = await admin.request(method, path, owner.token, body);
      expect([method, path, response.status, typeof response.body.error]).toEqual([method, path, status, 'string']);
    }
    const plain = await admin.request('PATCH', `/people/${target.id}`, owner.token, 'name=X', 'text/plain');
    expect([plain.status, typeof plain.body.error]).toEqual([415, 'string']);
    expect(await tableSnapshot(app.dataSource, TABLES)).toBe(before);
  });

  it('lists people by username, searched in any case in username, name and email, filtered by active and role, a page at a time', async () => {
    const auditor = await admin.signIn(['auditor']);
    const tag = randomUUID().slice(0, 6);
    const users = app.app.get(UsersService);
    for (const [index, name] of ['Mira', 'Noor', 'Omar', 'Pia', 'Quin'].entries()) await users.create(`${tag}_${index}`, PASSWORD, { name: `${name} ${tag}`, email: `${name.toLowerCase()}@${tag}.example` });
    await users.create(`z${randomUUID().slice(0, 6)}`, PASSWORD, { name: `Rita ${tag.toUpperCase()}` });
    const walk = async (first: string): Promise<string[][]> => {
      const pages: string[][] = [];
      for (let next: string | null = first; next !== null; ) {
        const page: AdminResponse = await admin.request('GET', next.replace('/admin/api/v1', ''), auditor.token);
        expect(page.status).toBe(200);
        pages.push((page.body.items as { username: string }[]).map((item) => item.username));
        next = page.body.next as string | null;
      }
      return pages;
    };
    expect(await walk(`/people?q=${tag.toUpperCase()}&limit=2`)).toEqual([[`${tag}_0`, `${tag}_1`], [`${tag}_2`, `${tag}_3`], [`${tag}_4`, expect.stringMatching(/^z/)]]);
    expect(await walk(`/people?q=${encodeURIComponent(`@${tag}.EXAMPLE`)}`)).toEqual([[0, 1, 2, 3, 4].map((i) => `${tag}_${i}`)]);
    // LIKE's wildcards are searched for as themselves: "_" would match the addresses' ".".
    expect(await walk(`/people?q=${tag}%25`)).toEqual([[]]);
    expect(await walk(`/people?q=${tag}_example`)).toEqual([[]]);
    await app.dataSource.query(`UPDATE "users" SET "active" = ${app.dataSource.options.type === 'postgres' ? 'false' : '0'} WHERE "username" = '${tag}_2'`);
    expect(await walk(`/people?q=${tag}&active=false`)).toEqual([[`${tag}_2`]]);
    expect((await walk(`/people?q=${tag}&active=true`)).flat()).toHaveLength(5);
    const listed = await admin.request('GET', `/people?role=auditor&q=${auditor.user.username}`, auditor.token);
    expect(listed.body.items).toEqual([{ id: auditor.userId, username: auditor.user.username, name: null, email: null, active: true, created_at: expect.any(String), roles: ['auditor'] }]);
  });
});
