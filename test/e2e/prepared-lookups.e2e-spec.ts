/**
 * The plain SQL of the hot paths (the token INSERT) and the prepared statements (the token check, the item read, the client lookup) (src/database/prepared-statement.ts) must read a token
 * exactly as TypeORM does: same columns, same types, same instants, on SQLite and PostgreSQL.
 */
import { Client } from '../../src/clients/client.entity.js';
import { ClientsService } from '../../src/clients/clients.service.js';
import { Item } from '../../src/items/item.entity.js';
import { ItemsRepository } from '../../src/items/items.repository.js';
import { Token } from '../../src/tokens/token.entity.js';
import { TokensService } from '../../src/tokens/tokens.service.js';
import { hashSecret } from '../../src/common/secrets.js';
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

  it('ItemsRepository.find returns what the repository returns, and nothing of another owner or collection', async () => {
    const items = app.app.get(ItemsRepository);
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
});
