/**
 * Issue 36, Idempotency-Key on the data API's writes (draft-ietf-httpapi-idempotency-key-header-07):
 * a POST or PATCH retried with its key gets the first answer (same item, same Location) and writes
 * nothing more, on any of three instances of one database, racing or not; the same key with another
 * body is 422, one still in flight 409 (§2.7); a malformed key 400; a failed request gives its key
 * up; a key is one client's for one person; the purge takes keys past their expiry.
 */
import { jest } from '@jest/globals';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { randomUUID } from 'node:crypto';
import { PurgeService } from '../../src/housekeeping/purge.service.js';
import { IdempotencyKey } from '../../src/idempotency/idempotency-key.entity.js';
import { keyHashOf, requestFingerprint } from '../../src/idempotency/idempotent-writes.js';
import { Item } from '../../src/items/item.entity.js';
import { ItemStore } from '../../src/items/item.store.js';
import { User } from '../../src/users/user.entity.js';
import { obtainAccessToken } from '../helpers/api-client.js';
import { TestApp, type RegisteredClient, type TestUser } from '../helpers/test-app.js';
import { startAnotherInstance } from '../helpers/app-at-issuer.js';

const ISSUER = 'http://latchkey.example.test:8443';
const NOTES = '/api/v1/notes';

interface Reply {
  status: number;
  headers: Headers;
  json: Record<string, unknown>;
}

describe('Idempotency-Key on the data API (issue 36)', () => {
  let app: TestApp;
  const others: NestFastifyApplication[] = [];
  const bases: string[] = [];
  let user: TestUser;
  let client: RegisteredClient;
  let token: string;

  beforeAll(async () => {
    app = await TestApp.start({ ISSUER, RATE_LIMIT_API_PER_MINUTE: '0', RATE_LIMIT_CLIENT_PER_MINUTE: '0', IDEMPOTENCY_CLAIM_SECONDS: '2', PURGE_INTERVAL_SECONDS: '0' });
    bases.push(app.baseUrl);
    for (let i = 0; i < 2; i++) {
      const { nest, baseUrl } = await startAnotherInstance();
      others.push(nest);
      bases.push(baseUrl);
    }
    user = await app.createUser();
    client = await app.createClient({ scope: 'notes:read notes:write' });
    token = await obtainAccessToken(app, client, user, 'notes:read notes:write');
  });
  afterEach(() => jest.restoreAllMocks());
  afterAll(async () => {
    for (const nest of others) await nest.close();
    await app?.stop();
  });

  async function send(method: string, path: string, body: unknown, options: { key?: string; as?: string; at?: number; contentType?: string } = {}): Promise<Reply> {
    const headers: Record<string, string> = { authorization: `Bearer ${options.as ?? token}`, 'content-type': options.contentType ?? (method === 'PATCH' ? 'application/merge-patch+json' : 'application/json') };
    if (options.key !== undefined) headers['idempotency-key'] = options.key;
    const response = await fetch(`${bases[options.at ?? 0]}${path}`, { method, headers, body: JSON.stringify(body) });
    const text = await response.text();
    return { status: response.status, headers: response.headers, json: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
  }
  const post = (body: unknown, options?: { key?: string; as?: string; at?: number }) => send('POST', NOTES, body, options);

  /** Notes with this title, whoever owns them: a duplicate shows here. */
  const notesTitled = (title: string): Promise<number> => app.dataSource.getRepository(Item).createQueryBuilder('item').where(`item.collection = 'notes'`).getMany().then((items) => items.filter((item) => item.data.title === title).length);
  const keyRows = (): Promise<number> => app.dataSource.getRepository(IdempotencyKey).count();
  const key = (): string => `"${randomUUID()}"`;

  it('replays a POST: the same status, body, Location and ETag, and no second item', async () => {
    const k = key();
    const first = await post({ title: 'once' }, { key: k });
    expect(first.status).toBe(201);
    for (const at of [0, 1, 2]) {
      const again = await post({ title: 'once' }, { key: k, at });
      expect({ status: again.status, json: again.json, location: again.headers.get('location'), etag: again.headers.get('etag') }).toEqual({
        status: 201,
        json: first.json,
        location: first.headers.get('location'),
        etag: first.headers.get('etag'),
      });
      expect(again.headers.get('last-modified')).toBe(first.headers.get('last-modified'));
    }
    expect(await notesTitled('once')).toBe(1);
  });

  it('takes the quoted form of the draft (an sf-string) and the bare form as the same key', async () => {
    const bare = randomUUID();
    const first = await post({ title: 'bare and quoted' }, { key: bare });
    const quoted = await post({ title: 'bare and quoted' }, { key: `"${bare}"` });
    expect(quoted.json.id).toBe(first.json.id);
    expect(await notesTitled('bare and quoted')).toBe(1);
  });

  it('answers the same key with another body 422 (§2.7), and writes nothing', async () => {
    const k = key();
    expect((await post({ title: 'first body' }, { key: k })).status).toBe(201);
    const other = await post({ title: 'second body' }, { key: k, at: 1 });
    expect({ status: other.status, json: other.json }).toEqual({ status: 422, json: { error: 'unprocessable_entity', error_description: expect.stringContaining('Idempotency-Key') } });
    expect(await notesTitled('second body')).toBe(0);
  });

  it.each([
    ['empty', ''],
    ['an empty string', '""'],
    ['unterminated', '"abc'],
    ['with a space', 'a b'],
    ['two fields', 'a, b'],
    ['with parameters', '"a";p=1'],
    ['too long', 'x'.repeat(256)],
    ['a byte outside printable ASCII', '"caf\u00e9"'],
  ])('refuses a key that is %s with 400, writing nothing', async (_, value) => {
    const before = await keyRows();
    const reply = await post({ title: `malformed ${value.length}` }, { key: value });
    expect({ status: reply.status, error: reply.json.error }).toEqual({ status: 400, error: 'invalid_request' });
    expect(await keyRows()).toBe(before);
    expect(await notesTitled(`malformed ${value.length}`)).toBe(0);
  });

  it('answers a request while another holds its key 409 with Retry-After; once that claim runs out, a retry takes the key over', async () => {
    const k = randomUUID();
    const body = { title: 'held elsewhere' };
    // Another instance's request with this key, in flight: its claim row, as that instance wrote it.
    const userId = (await app.dataSource.getRepository(User).findOneByOrFail({ username: user.username })).id;
    const row = { keyHash: keyHashOf({ clientId: client.clientId, userId }, k), fingerprint: requestFingerprint('POST', NOTES, 'application/json', Buffer.from(JSON.stringify(body))), claim: randomUUID(), response: null };
    await app.dataSource.getRepository(IdempotencyKey).insert({ ...row, claimedUntil: new Date(Date.now() + 60_000), expiresAt: new Date(Date.now() + 86_400_000) });
    const busy = await post(body, { key: k });
    expect({ status: busy.status, error: busy.json.error, retryAfter: busy.headers.get('retry-after') }).toEqual({ status: 409, error: 'conflict', retryAfter: '1' });
    expect(await notesTitled('held elsewhere')).toBe(0);
    // That instance died: its claim runs out, and the retry runs.
    await app.dataSource.getRepository(IdempotencyKey).update({ keyHash: row.keyHash }, { claimedUntil: new Date(Date.now() - 1000) });
    const retried = await post(body, { key: k, at: 2 });
    expect(retried.status).toBe(201);
    expect((await post(body, { key: k })).json.id).toBe(retried.json.id);
    expect(await notesTitled('held elsewhere')).toBe(1);
  });

  it('answers concurrent requests with one key, on three instances, with one item: 201 (the same one) or 409', async () => {
    const k = key();
    const replies = await Promise.all(Array.from({ length: 9 }, (_, i) => post({ title: 'racing' }, { key: k, at: i % 3 })));
    const created = replies.filter((reply) => reply.status === 201);
    expect(replies.every((reply) => reply.status === 201 || reply.status === 409)).toBe(true);
    expect(created.length).toBeGreaterThanOrEqual(1);
    for (const reply of created) expect(reply.json.id).toBe(created[0].json.id);
    expect(await notesTitled('racing')).toBe(1);
    expect((await post({ title: 'racing' }, { key: k })).json.id).toBe(created[0].json.id);
  });

  it('gives the key up when the request fails: a refused body (400) and a server error (500) leave it free for the retry', async () => {
    const k = key();
    const invalid = await post({ title: '' }, { key: k });
    expect(invalid.status).toBe(400);
    expect(invalid.json.error_description).not.toContain('Idempotency-Key');
    jest.spyOn(app.app.get(ItemStore), 'create').mockRejectedValueOnce(new Error('the database went away'));
    expect((await post({ title: 'after a failure' }, { key: k })).status).toBe(500);
    const retried = await post({ title: 'after a failure' }, { key: k });
    expect(retried.status).toBe(201);
    expect(await notesTitled('after a failure')).toBe(1);
  });

  it('replays a PATCH: the item is patched once (its version says so)', async () => {
    const created = await post({ title: 'to patch' });
    const path = `${NOTES}/${created.json.id as string}`;
    const k = key();
    const patched = await send('PATCH', path, { done: true }, { key: k });
    expect(patched.status).toBe(200);
    const again = await send('PATCH', path, { done: true }, { key: k, at: 1 });
    expect({ status: again.status, json: again.json, etag: again.headers.get('etag') }).toEqual({ status: 200, json: patched.json, etag: patched.headers.get('etag') });
    const stored = await app.dataSource.getRepository(Item).findOneByOrFail({ id: created.json.id as string });
    expect(stored.version).toBe(2);
  });

  it('keeps a key per client and per person: the same key from another client or person is another key', async () => {
    const k = key();
    const otherClient = await app.createClient({ scope: 'notes:read notes:write' });
    const otherUser = await app.createUser();
    const mine = await post({ title: 'per owner' }, { key: k });
    const theirs = await post({ title: 'per owner' }, { key: k, as: await obtainAccessToken(app, otherClient, user, 'notes:read notes:write') });
    const hers = await post({ title: 'per owner' }, { key: k, as: await obtainAccessToken(app, client, otherUser, 'notes:read notes:write') });
    expect([mine.status, theirs.status, hers.status]).toEqual([201, 201, 201]);
    expect(new Set([mine.json.id, theirs.json.id, hers.json.id]).size).toBe(3);
  });

  it('refuses a token without the write scope before the key is claimed: 403, no key, no item', async () => {
    const reader = await obtainAccessToken(app, client, user, 'notes:read');
    const before = await keyRows();
    const reply = await post({ title: 'not allowed' }, { key: key(), as: reader });
    expect(reply.status).toBe(403);
    expect(await keyRows()).toBe(before);
    expect(await notesTitled('not allowed')).toBe(0);
  });

  it('is purged once expired; the key is then free for a new request', async () => {
    const k = key();
    const first = await post({ title: 'expiring' }, { key: k });
    await app.dataSource.getRepository(IdempotencyKey).createQueryBuilder().update().set({ expiresAt: new Date(Date.now() - 2 * 86_400_000) }).execute();
    const purged = await app.app.get(PurgeService).purge();
    expect(purged.idempotencyKeys).toBeGreaterThanOrEqual(1);
    expect(await keyRows()).toBe(0);
    const fresh = await post({ title: 'expiring' }, { key: k });
    expect(fresh.status).toBe(201);
    expect(fresh.json.id).not.toBe(first.json.id);
  });
});
