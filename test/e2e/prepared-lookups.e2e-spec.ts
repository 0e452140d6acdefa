/**
 * The plain SQL of the hot paths (the token and code INSERTs, the conditional UPDATEs that redeem a code and rotate a refresh
 * token) and the prepared statements (the token check, the code and client lookups, the item read, the pages' session, user
 * and consent lookups; GET /authorize's one statement for those three is pinned in signed-in-consent.e2e-spec.ts)
 * (src/database/prepared-statement.ts) must read a row exactly as TypeORM does: same columns, same types, same instants, on
 * SQLite and PostgreSQL.
 */
import { Client } from '../../src/clients/client.entity.js';
import { ClientsService } from '../../src/clients/clients.service.js';
import { Item } from '../../src/items/item.entity.js';
import { ItemStore } from '../../src/items/item.store.js';
import { AuthorizationCode } from '../../src/codes/authorization-code.entity.js';
import { CodesService } from '../../src/codes/codes.service.js';
import { Token } from '../../src/tokens/token.entity.js';
import { TokensService } from '../../src/tokens/tokens.service.js';
import { hashSecret } from '../../src/common/secrets.js';
import { Consent } from '../../src/consents/consent.entity.js';
import { ConsentStore } from '../../src/consents/consent.store.js';
import { SessionClient } from '../../src/sessions/session-client.entity.js';
import { Session } from '../../src/sessions/session.entity.js';
import { SessionStore } from '../../src/sessions/session.store.js';
import { User } from '../../src/users/user.entity.js';
import { UserStore } from '../../src/users/user.store.js';
import { jest } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { obtainTokens } from '../helpers/api-client.js';
import { TestApp } from '../helpers/test-app.js';

describe('TokensService.findByValue', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await TestApp.start();
  });
  afterAll(async () => app?.stop());

  it('returns what the repository returns, for access and refresh tokens, revoked or not', async () => {
    const client = await app.createClient({ grantTypes: ['authorization_code', 'refresh_token'] });
    const user = await app.createUser();
    const issued = await obtainTokens(app, client, user, 'notes:read');
    const tokens = app.app.get(TokensService);
    const repository = app.dataSource.getRepository(Token);
    const access = await repository.findOneByOrFail({ tokenHash: hashSecret(issued.accessToken) });
    await repository.update(access.id, { revokedAt: new Date('2030-01-02T03:04:05.678Z') });

    for (const value of [issued.accessToken, issued.refreshToken!]) {
      const expected = await repository.findOneByOrFail({ tokenHash: hashSecret(value) });
      const found = await tokens.findByValue(value);
      expect(found).toBeInstanceOf(Token);
      expect(found).toEqual(expected);
    }
    expect((await tokens.findByValue(issued.accessToken))!.revokedAt).toEqual(new Date('2030-01-02T03:04:05.678Z'));
    expect(await tokens.findByValue('lk_at_unknown')).toBeNull();
  });

  it('works again after the database connection was replaced', async () => {
    const tokens = app.app.get(TokensService);
    await app.dataSource.destroy();
    await expect(tokens.findByValue('lk_at_x')).rejects.toThrow();
    await app.dataSource.initialize();
    expect(await tokens.findByValue('lk_at_x')).toBeNull();
  });

  it('ItemStore.find returns what the repository returns, and nothing of another owner or collection', async () => {
    const items = app.app.get(ItemStore);
    const owner = await app.createUser();
    const ownerId = (await app.dataSource.query(`SELECT "id" FROM "users" WHERE "username" = '${owner.username}'`))[0].id as string;
    const created = await items.create('notes', ownerId, { title: 'Prepared', tags: ['a', 'b'], done: false });
    const expected = await app.dataSource.getRepository(Item).findOneByOrFail({ id: created.id });
    const found = await items.find('notes', ownerId, created.id);
    expect(found).toBeInstanceOf(Item);
    expect(found).toEqual(expected);
    expect(await items.find('photos', ownerId, created.id)).toBeNull();
    expect(await items.find('notes', '00000000-0000-4000-8000-000000000000', created.id)).toBeNull();
  });

  it('ItemStore.find asked many times in one turn (one statement on PostgreSQL) gives each caller its item, and nothing of another owner or collection', async () => {
    const items = app.app.get(ItemStore);
    const ids = async (): Promise<string> => {
      const person = await app.createUser();
      return (await app.dataSource.query(`SELECT "id" FROM "users" WHERE "username" = '${person.username}'`))[0].id as string;
    };
    const [alice, bob] = [await ids(), await ids()];
    const mine = await items.create('notes', alice, { title: 'Alice' });
    const theirs = await items.create('notes', bob, { title: 'Bob' });
    const found = await Promise.all([
      items.find('notes', alice, mine.id),
      items.find('notes', alice, theirs.id),
      items.find('notes', bob, theirs.id),
      items.find('photos', alice, mine.id),
      items.find('notes', alice, randomUUID()),
      items.find('notes', alice, mine.id),
    ]);
    expect(found.map((item) => item?.data.title ?? null)).toEqual(['Alice', null, 'Bob', null, null, 'Alice']);
    // The same row read once for two callers: each gets an entity of its own.
    expect(found[0]).not.toBe(found[5]);
    expect(found[0]).toEqual(await app.dataSource.getRepository(Item).findOneByOrFail({ id: mine.id }));
  });

  it('ClientsService.findById returns what the repository returns, for confidential and public clients', async () => {
    const confidential = await app.createClient({ grantTypes: ['authorization_code', 'refresh_token'], redirectUris: ['https://a.example/cb', 'https://b.example/cb'] });
    const publicClient = await app.createClient({ isPublic: true });
    const clients = app.app.get(ClientsService);
    for (const { clientId } of [confidential, publicClient]) {
      const expected = await app.dataSource.getRepository(Client).findOneByOrFail({ id: clientId });
      const found = await clients.findById(clientId);
      expect(found).toBeInstanceOf(Client);
      expect(found).toEqual(expected);
      expect(found!.isPublic).toBe(expected.isPublic);
    }
    expect(await clients.findById('no-such-client')).toBeNull();
  });

  it('TokensService.issue writes rows that TypeORM reads back with the exact instants and values', async () => {
    const client = await app.createClient({ grantTypes: ['client_credentials', 'refresh_token'] });
    const now = new Date('2031-05-06T07:08:09.123Z');
    const spy = jest.spyOn(app.clock, 'now').mockReturnValue(now);
    try {
      const familyId = randomUUID();
      const issued = await app.app.get(TokensService).issue({ familyId, clientId: client.clientId, userId: null, scope: 'notes:read', refreshScope: 'notes:read notes:write' });
      const repository = app.dataSource.getRepository(Token);
      const access = await repository.findOneByOrFail({ tokenHash: hashSecret(issued.accessToken) });
      const refresh = await repository.findOneByOrFail({ tokenHash: hashSecret(issued.refreshToken!) });
      expect(access).toMatchObject({ kind: 'access', familyId, clientId: client.clientId, userId: null, scope: 'notes:read', consumedAt: null, revokedAt: null, createdAt: now });
      expect(access.expiresAt).toEqual(new Date(now.getTime() + issued.expiresIn * 1000));
      expect(refresh).toMatchObject({ kind: 'refresh', familyId, scope: 'notes:read notes:write', createdAt: now });
      expect(refresh.expiresAt.getTime()).toBeGreaterThan(access.expiresAt.getTime());
    } finally {
      spy.mockRestore();
    }
  });

  it('CodesService.issue writes a code that TypeORM reads back, and findByCode returns what the repository returns', async () => {
    const client = await app.createClient();
    const owner = await app.createUser();
    const userId = (await app.dataSource.query(`SELECT "id" FROM "users" WHERE "username" = '${owner.username}'`))[0].id as string;
    const now = new Date('2031-05-06T07:08:09.123Z');
    const spy = jest.spyOn(app.clock, 'now').mockReturnValue(now);
    try {
      const codes = app.app.get(CodesService);
      const repository = app.dataSource.getRepository(AuthorizationCode);
      for (const [redirectUriInRequest, codeChallenge] of [[true, 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM'], [false, null]] as const) {
        const code = await codes.issue({ clientId: client.clientId, userId, redirectUri: client.redirectUri, redirectUriInRequest, scope: 'notes:read', codeChallenge });
        const expected = await repository.findOneByOrFail({ codeHash: hashSecret(code) });
        expect(expected).toMatchObject({ clientId: client.clientId, userId, redirectUriInRequest, codeChallenge, consumedAt: null, createdAt: now });
        expect(expected.expiresAt).toEqual(new Date(now.getTime() + 600_000));
        const found = await codes.findByCode(code);
        expect(found).toBeInstanceOf(AuthorizationCode);
        expect(found).toEqual(expected);
      }
      expect(await codes.findByCode('lk_ac_unknown')).toBeNull();
    } finally {
      spy.mockRestore();
    }
  });

  it('CodesService.consume and TokensService.rotateRefreshToken change exactly one row once, and a refused rotation stores nothing', async () => {
    const client = await app.createClient({ grantTypes: ['authorization_code', 'refresh_token'] });
    const owner = await app.createUser();
    const userId = (await app.dataSource.query(`SELECT "id" FROM "users" WHERE "username" = '${owner.username}'`))[0].id as string;
    const codes = app.app.get(CodesService);
    const tokens = app.app.get(TokensService);
    const now = new Date('2031-05-06T07:08:09.123Z');
    const spy = jest.spyOn(app.clock, 'now').mockReturnValue(now);
    try {
      const code = await codes.findByCode(await codes.issue({ clientId: client.clientId, userId, redirectUri: client.redirectUri, redirectUriInRequest: true, scope: 'notes:read', codeChallenge: null }));
      expect(await app.dataSource.transaction((manager) => codes.consume(code!.id, manager))).toBe(true);
      expect(await codes.consume(code!.id)).toBe(false);
      expect((await app.dataSource.getRepository(AuthorizationCode).findOneByOrFail({ id: code!.id })).consumedAt).toEqual(now);

      const grant = { familyId: randomUUID(), clientId: client.clientId, userId, scope: 'notes:read', refreshScope: 'notes:read' };
      const issued = await tokens.issue(grant);
      const access = (await tokens.findByValue(issued.accessToken))!;
      const refresh = (await tokens.findByValue(issued.refreshToken!))!;
      /** Rotates `tokenId` into new successors; whether they were stored, checked by looking them up. */
      const rotate = async (tokenId: string): Promise<boolean> => {
        const successors = await tokens.mint(grant);
        const rotated = await tokens.rotateRefreshToken(tokenId, successors);
        const stored = (await tokens.findByValue(successors.issued.accessToken)) !== null && (await tokens.findByValue(successors.issued.refreshToken!)) !== null;
        expect(stored).toBe(rotated !== undefined);
        if (rotated) expect((await tokens.findByValue(successors.issued.refreshToken!))!.createdAt).toEqual(now);
        return stored;
      };
      expect(await rotate(access.id)).toBe(false); // an access token is never "rotated"
      expect(await rotate(refresh.id)).toBe(true);
      expect(await rotate(refresh.id)).toBe(false);
      expect((await tokens.findByValue(issued.refreshToken!))!.consumedAt).toEqual(now);

      const revoked = await tokens.issue({ ...grant, familyId: randomUUID() });
      await tokens.revokeFamily((await tokens.findByValue(revoked.refreshToken!))!.familyId);
      expect(await rotate((await tokens.findByValue(revoked.refreshToken!))!.id)).toBe(false);
    } finally {
      spy.mockRestore();
    }
  });

  it('gives tokens, codes and token families time-ordered ids (UUIDv7), so rows issued together share index pages', async () => {
    const client = await app.createClient({ grantTypes: ['authorization_code', 'refresh_token'] });
    const user = await app.createUser();
    const first = await obtainTokens(app, client, user, 'notes:read');
    const second = await obtainTokens(app, client, user, 'notes:read');
    const repository = app.dataSource.getRepository(Token);
    const rows = [];
    for (const value of [first.accessToken, first.refreshToken!, second.accessToken, second.refreshToken!]) rows.push(await repository.findOneByOrFail({ tokenHash: hashSecret(value) }));
    const v7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
    for (const row of rows) {
      expect(row.id).toMatch(v7);
      // The family id of a code's tokens is the code's id.
      expect(row.familyId).toMatch(v7);
    }
    // The first grant's rows sort before the second's, by id and by family.
    expect(rows[1].id < rows[2].id && rows[0].id < rows[3].id).toBe(true);
    expect(rows[0].familyId < rows[2].familyId).toBe(true);
    const code = await app.dataSource.getRepository(AuthorizationCode).findOneByOrFail({ id: rows[2].familyId });
    expect(code.id).toMatch(v7);
  });

  it('UserStore.findById and ConsentStore.find return what the repository returns', async () => {
    const client = await app.createClient({ grantTypes: ['authorization_code', 'refresh_token'] });
    const person = await app.createUser();
    await obtainTokens(app, client, person, 'notes:read');
    const user = await app.dataSource.getRepository(User).findOneByOrFail({ username: person.username });
    await app.dataSource.getRepository(User).update(user.id, { email: 'p@example.com', emailVerified: true, name: 'P. Erson' });
    const expectedUser = await app.dataSource.getRepository(User).findOneByOrFail({ id: user.id });
    const foundUser = await app.app.get(UserStore).findById(user.id);
    expect(foundUser).toBeInstanceOf(User);
    expect(foundUser).toEqual(expectedUser);
    expect(foundUser!.emailVerified).toBe(true);
    expect(await app.app.get(UserStore).findById('00000000-0000-4000-8000-000000000000')).toBeNull();

    const expectedConsent = await app.dataSource.getRepository(Consent).findOneByOrFail({ userId: user.id, clientId: client.clientId });
    const foundConsent = await app.app.get(ConsentStore).find(user.id, client.clientId);
    expect(foundConsent).toBeInstanceOf(Consent);
    expect(foundConsent).toEqual(expectedConsent);
    expect(await app.app.get(ConsentStore).find(user.id, 'no-such-client')).toBeNull();
  });

  it('SessionStore.isLive is true only for a live session of that user, and recordClient writes a pair once', async () => {
    const client = await app.createClient();
    const person = await app.createUser();
    const userId = (await app.dataSource.getRepository(User).findOneByOrFail({ username: person.username })).id;
    const other = (await app.dataSource.getRepository(User).findOneByOrFail({ username: (await app.createUser()).username })).id;
    const sessions = app.app.get(SessionStore);
    const now = new Date('2030-06-01T12:00:00.000Z');
    const session = (id: string, expiresAt: string, endedAt: string | null = null): Session => ({ id, userId, publicId: randomUUID(), createdAt: new Date('2030-06-01T11:00:00.000Z'), expiresAt: new Date(expiresAt), endedAt: endedAt ? new Date(endedAt) : null, ip: null, device: null });
    await sessions.insert(session('a'.repeat(64), '2030-06-01T12:00:00.000Z'));
    await sessions.insert(session('b'.repeat(64), '2030-06-01T11:59:59.999Z'));
    await sessions.insert(session('c'.repeat(64), '2030-06-02T00:00:00.000Z', '2030-06-01T11:30:00.000Z'));
    // Expiring at this very instant still counts, as TypeORM's MoreThanOrEqual did; a millisecond earlier does not.
    expect(await sessions.isLive('a'.repeat(64), userId, now)).toBe(true);
    expect(await sessions.isLive('b'.repeat(64), userId, now)).toBe(false);
    expect(await sessions.isLive('c'.repeat(64), userId, now)).toBe(false);
    expect(await sessions.isLive('a'.repeat(64), other, now)).toBe(false);
    expect(await sessions.isLive('d'.repeat(64), userId, now)).toBe(false);

    await sessions.recordClient('a'.repeat(64), client.clientId, now);
    await sessions.recordClient('a'.repeat(64), client.clientId, new Date('2030-06-01T12:05:00.000Z'));
    const recorded = await app.dataSource.getRepository(SessionClient).findBy({ sessionId: 'a'.repeat(64) });
    expect(recorded).toEqual([expect.objectContaining({ clientId: client.clientId, createdAt: now })]);
  });
});
