/**
 * The prepared statements of the hot paths (the token check, the item read) (src/database/prepared-statement.ts) must read a token
 * exactly as TypeORM does: same columns, same types, same instants, on SQLite and PostgreSQL.
 */
import { Item } from '../../src/items/item.entity.js';
import { ItemsRepository } from '../../src/items/items.repository.js';
import { Token } from '../../src/tokens/token.entity.js';
import { TokensService } from '../../src/tokens/tokens.service.js';
import { hashSecret } from '../../src/common/secrets.js';
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
});
