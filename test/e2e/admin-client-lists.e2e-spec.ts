/**
 * Issue 48: the admin API's lists about clients: clients (search, filters, keyset paging), a
 * client's grants (and their withdrawal) and live sessions, and resource servers.
 */
import { AdminApi, type AdminResponse } from '../helpers/admin-api.js';
import { adminCallers, auditEventsOf, personWithGrant, serviceClientMetadata, type AdminCallers } from '../helpers/admin-clients-api.js';
import { TestApp } from '../helpers/test-app.js';

describe('admin API: lists of clients, grants, sessions and resource servers', () => {
  let app: TestApp;
  let admin: AdminApi;
  let callers: AdminCallers;

  beforeAll(async () => {
    app = await TestApp.start();
    admin = await AdminApi.setUp(app);
    callers = await adminCallers(admin);
  });

  afterAll(async () => {
    await app.stop();
  });

  /** Every item of a list, following `next` from `path`, with the pages' sizes. */
  async function everyPage(path: string, token: string): Promise<{ items: Record<string, unknown>[]; sizes: number[] }> {
    const items: Record<string, unknown>[] = [];
    const sizes: number[] = [];
    let next: string | null = `/admin/api/v1${path}`;
    while (next !== null) {
      const answer: AdminResponse = await admin.request('GET', next.replace('/admin/api/v1', ''), token);
      expect(answer.status).toBe(200);
      items.push(...(answer.body.items as Record<string, unknown>[]));
      sizes.push((answer.body.items as unknown[]).length);
      next = answer.body.next as string | null;
    }
    return { items, sizes };
  }

  it('lists clients by name, a page at a time, with q, grant_type and type; bad paging or filters are 400', async () => {
    // Two clients share a name: the keyset's second key (the id) keeps them apart across pages.
    for (const name of ['Zeta paging', 'Beta paging', 'Alpha paging', 'Beta paging', 'Gamma paging']) await admin.request('POST', '/clients', callers.clientAdmin.token, serviceClientMetadata(name));
    await admin.request('POST', '/clients', callers.clientAdmin.token, { client_name: 'Public paging', redirect_uris: ['https://spa.example.com/cb'], token_endpoint_auth_method: 'none' });
    const { items, sizes } = await everyPage('/clients?q=PAGING&limit=2', callers.auditor.token);
    expect(sizes).toEqual([2, 2, 2]);
    expect(new Set(items.map((item) => item.client_id)).size).toBe(6);
    expect(items.map((item) => item.client_name)).toEqual(['Alpha paging', 'Beta paging', 'Beta paging', 'Gamma paging', 'Public paging', 'Zeta paging']);
    const idOf = (name: string) => String(items.find((item) => item.client_name === name)!.client_id);
    expect((await everyPage(`/clients?q=${idOf('Gamma paging').slice(2, 12)}`, callers.owner.token)).items.map((item) => item.client_name)).toEqual(['Gamma paging']);
    expect((await everyPage('/clients?q=paging&type=public', callers.owner.token)).items.map((item) => item.client_name)).toEqual(['Public paging']);
    expect((await everyPage('/clients?q=paging&type=confidential&grant_type=client_credentials', callers.owner.token)).items).toHaveLength(5);
    expect((await everyPage('/clients?q=paging&grant_type=authorization_code', callers.owner.token)).items.map((item) => item.client_name)).toEqual(['Public paging']);
    expect((await everyPage('/clients?q=100%25_', callers.owner.token)).items).toEqual([]);
    for (const query of ['limit=0', 'limit=201', 'limit=two', 'cursor=garbage', 'cursor=', 'type=secret', 'grant_type=magic', 'q=', 'qq=x', 'q=a&q=b']) {
      const refused = await admin.request('GET', `/clients?${query}`, callers.auditor.token);
      expect([query, refused.status, refused.body.error]).toEqual([query, 400, 'invalid_request']);
    }
  });

  it('lists the people who consented, by username; withdrawing one revokes their tokens for the client, audited with the administrator', async () => {
    const client = await app.createClient({ name: 'Grants' });
    const people = [await personWithGrant(app, client), await personWithGrant(app, client), await personWithGrant(app, client)];
    const { items, sizes } = await everyPage(`/clients/${client.clientId}/grants?limit=2`, callers.auditor.token);
    expect(sizes).toEqual([2, 1]);
    expect(items.map((item) => (item.person as { username: string }).username)).toEqual(people.map((person) => person.user.username).sort());
    expect(items[0]).toEqual({ person: { id: expect.any(String), username: expect.any(String), name: null }, scope: 'notes:read openid', granted_at: expect.any(String), updated_at: expect.any(String) });
    const [leaving] = people;
    const readNotes = (token: string) => fetch(app.url('/api/v1/notes'), { headers: { authorization: `Bearer ${token}` } }).then((response) => response.status);
    expect(await readNotes(leaving.accessToken)).toBe(200);
    expect((await admin.request('DELETE', `/clients/${client.clientId}/grants/${leaving.userId}`, callers.clientAdmin.token)).status).toBe(204);
    expect(await readNotes(leaving.accessToken)).toBe(401);
    expect(await readNotes(people[1].accessToken)).toBe(200);
    expect((await everyPage(`/clients/${client.clientId}/grants`, callers.owner.token)).items).toHaveLength(2);
    expect((await admin.request('DELETE', `/clients/${client.clientId}/grants/${leaving.userId}`, callers.clientAdmin.token)).status).toBe(404);
    const [withdrawn] = (await auditEventsOf(app.dataSource, `client:${client.clientId}`)).filter(([, action]) => action === 'consent.withdrawn');
    expect(withdrawn).toEqual([`user:${callers.clientAdmin.userId}`, 'consent.withdrawn', { user_id: leaving.userId, tokens_revoked: expect.any(Number) }, '127.0.0.1']);
    const badCursor = await admin.request('GET', `/clients/${client.clientId}/grants?cursor=${Buffer.from(JSON.stringify(['a', 'not-a-uuid'])).toString('base64url')}`, callers.owner.token);
    expect([badCursor.status, badCursor.body.error]).toEqual([400, 'invalid_request']);
  });

  it('lists the live sessions the client signed people in through, newest first, with their count; an ended one drops out', async () => {
    const client = await app.createClient({ name: 'Sessions' });
    const first = await personWithGrant(app, client);
    const second = await personWithGrant(app, client);
    const page = await admin.request('GET', `/clients/${client.clientId}/sessions?limit=1`, callers.auditor.token);
    expect(page.status).toBe(200);
    expect(page.body.count).toBe(2);
    expect(page.body.items).toEqual([{ sid: expect.any(String), person: { id: expect.any(String), username: expect.any(String) }, signed_in_at: expect.any(String), expires_at: expect.any(String), client_since: expect.any(String) }]);
    const { items } = await everyPage(`/clients/${client.clientId}/sessions?limit=1`, callers.auditor.token);
    expect(new Set(items.map((item) => (item.person as { id: string }).id))).toEqual(new Set([first.userId, second.userId]));
    const signedIn = items.map((item) => String(item.signed_in_at));
    expect(signedIn).toEqual([...signedIn].sort().reverse());
    await app.dataSource.query(`UPDATE "sessions" SET "ended_at" = "created_at", "expires_at" = "created_at" WHERE "user_id" = '${first.userId}'`);
    const after = await admin.request('GET', `/clients/${client.clientId}/sessions`, callers.owner.token);
    expect([after.body.count, (after.body.items as { person: { id: string } }[]).map((item) => item.person.id)]).toEqual([1, [second.userId]]);
    const forged = await admin.request('GET', `/clients/${client.clientId}/sessions?cursor=${Buffer.from(JSON.stringify(['-271821-04-20', 'x'])).toString('base64url')}`, callers.owner.token);
    expect([forged.status, forged.body.error]).toEqual([400, 'invalid_request']);
  });

  it('registers, lists (by name, paged) and removes resource servers as resources:* do', async () => {
    const created: string[] = [];
    for (const name of ['Orders', 'Billing', 'Archive']) {
      const answer = await admin.request('POST', '/resource-servers', callers.clientAdmin.token, { uri: `https://${name.toLowerCase()}.example.com/api`, name, access_token_format: name === 'Billing' ? 'jwt' : 'opaque' });
      expect(answer.status).toBe(201);
      expect(answer.headers.get('location')).toBe(`/admin/api/v1/resource-servers/${String(answer.body.id)}`);
      created.push(String(answer.body.id));
    }
    const duplicate = await admin.request('POST', '/resource-servers', callers.clientAdmin.token, { uri: 'https://orders.example.com/api' });
    expect([duplicate.status, duplicate.body.error]).toEqual([400, 'invalid_request']);
    const { items, sizes } = await everyPage('/resource-servers?limit=2', callers.auditor.token);
    expect(sizes).toEqual([2, 1]);
    expect(items.map((item) => [item.name, item.access_token_format])).toEqual([['Archive', 'opaque'], ['Billing', 'jwt'], ['Orders', 'opaque']]);
    expect((await admin.request('DELETE', `/resource-servers/${created[0]}`, callers.clientAdmin.token)).status).toBe(204);
    expect((await admin.request('DELETE', `/resource-servers/${created[0]}`, callers.clientAdmin.token)).status).toBe(404);
    expect((await everyPage('/resource-servers', callers.auditor.token)).items.map((item) => item.name)).toEqual(['Archive', 'Billing']);
  });
});
