/**
 * A token request whose client or person is deleted after the request read it, before its tokens
 * are written: the INSERT names a row that is gone (a foreign key violation). The request's input
 * was fine and nothing may be written, so the answer is the OAuth error the next request would get
 * (invalid_client for a deleted client, invalid_grant for a deleted person), never a 500.
 *
 * The deletion is made, by the application's own services, at the exact moment between the reads
 * and the write: a spy on TokenStore's INSERT runs it and then lets the real INSERT go on. The
 * database, the constraint and the error are the real ones, on SQLite and PostgreSQL alike.
 */
import { jest } from '@jest/globals';
import { AccountsService } from '../../src/accounts/accounts.service.js';
import { ClientsService } from '../../src/clients/clients.service.js';
import { TokenStore } from '../../src/tokens/token.store.js';
import { basicAuth } from '../helpers/oauth-flow.js';
import { TestApp } from '../helpers/test-app.js';

interface Reply {
  status: number;
  body: Record<string, unknown>;
}

describe('a token request that meets the deletion of its client or person half-way', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await TestApp.start();
  });
  afterAll(async () => {
    await app?.stop();
  });

  async function token(clientId: string, secret: string, form: Record<string, string>): Promise<Reply> {
    const response = await fetch(app.url('/token'), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basicAuth(clientId, secret) },
      body: new URLSearchParams(form),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  }

  /** Runs `deletion` once, just before the next token INSERT, then the real INSERT. */
  function deleteBeforeNextInsert(deletion: () => Promise<void>): void {
    const insert = TokenStore.prototype.insert;
    jest.spyOn(TokenStore.prototype, 'insert').mockImplementationOnce(async function (this: TokenStore, ...args: Parameters<TokenStore['insert']>) {
      await deletion();
      return insert.apply(this, args);
    });
  }

  async function tokensOf(clientId: string): Promise<number> {
    const rows = await app.dataSource.query<{ count: string | number }[]>(`SELECT COUNT(*) AS "count" FROM "tokens" WHERE "client_id" = '${clientId}'`);
    return Number(rows[0]!.count);
  }

  afterEach(() => jest.restoreAllMocks());

  it('a client deleted between its authentication and its tokens: 401 invalid_client, nothing written', async () => {
    const client = await app.createClient({ redirectUris: [], scope: 'notes:read', grantTypes: ['client_credentials'] as never });
    deleteBeforeNextInsert(() => app.app.get(ClientsService).delete(client.clientId));

    const reply = await token(client.clientId, client.clientSecret!, { grant_type: 'client_credentials' });

    expect(reply.status).toBe(401);
    expect(reply.body).toEqual({ error: 'invalid_client', error_description: 'This client was deleted while the request ran' });
    expect(await tokensOf(client.clientId)).toBe(0);
    // The client's next request hears the same, from client authentication this time.
    expect((await token(client.clientId, client.clientSecret!, { grant_type: 'client_credentials' })).body.error).toBe('invalid_client');
  });

  it('a person deleted between their password check and their tokens: 400 invalid_grant, nothing written', async () => {
    const client = await app.createClient({ redirectUris: [], scope: 'notes:read', grantTypes: ['password'] as never });
    const person = await app.createUser();
    deleteBeforeNextInsert(() => app.app.get(AccountsService).deleteUser(person.username, 'test'));

    const reply = await token(client.clientId, client.clientSecret!, { grant_type: 'password', username: person.username, password: person.password, scope: 'notes:read' });

    expect(reply.status).toBe(400);
    expect(reply.body).toEqual({ error: 'invalid_grant', error_description: 'The person this grant was made for was deleted while the request ran' });
    expect(await tokensOf(client.clientId)).toBe(0);
  });
});
