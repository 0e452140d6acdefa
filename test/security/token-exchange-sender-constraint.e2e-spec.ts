/**
 * Token exchange (RFC 8693) must not strip a token's binding to its key (issue 43, finding 6). A
 * confidential client whose secret leaked, holding a stolen DPoP-bound token but not the key, could
 * exchange it for a bearer token that opened the API. Now a DPoP-bound subject token is exchanged
 * only with a proof of its key, and the result is bound to that key (RFC 9449 §5, §7; FAPI 2.0
 * sender-constraining); a MAC token, whose key no token request can prove, is not exchanged at all.
 * Every refusal leaves the tokens and audit tables as they were.
 */
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { ClientsService } from '../../src/clients/clients.service.js';
import { TokenType } from '../../src/common/oauth.constants.js';
import { startAtIssuer } from '../helpers/app-at-issuer.js';
import { Browser } from '../helpers/browser.js';
import { newDpopKey, type DpopKey } from '../helpers/dpop-key.js';
import { dropTestDatabase } from '../helpers/test-database.js';
import { exchange, expectRefusedWithoutWrites, introspect, personTokens, REDIRECT_URI, setUpExchangeWorld, TOKEN_EXCHANGE, type ExchangeWorld, type Reply } from '../helpers/token-exchange.js';

describe('token exchange keeps a sender-constrained subject token sender-constrained (RFC 9449 §5, §7; RFC 8693 §2.1)', () => {
  let nest: NestFastifyApplication;
  let world: ExchangeWorld;
  /** The key the gateway redeemed the person's code with. */
  let key: DpopKey;
  /** The person's access token, bound to `key`. */
  let bound: string;

  const tokenUrl = (): URL => new URL('/token', world.issuer);
  const notesUrl = (): URL => new URL('/api/v1/notes', world.issuer);
  /** An exchange of `subject` for Latchkey's own API by the gateway, with a proof of `by`. */
  const exchangeWith = (by: DpopKey, subject: string): Promise<Reply> => by.send('POST', tokenUrl(), (proof) => exchange(world, world.gateway, subject, [world.self], {}, { dpop: proof }));
  /** GET /api/v1/notes with `token` as a DPoP token and a proof of `by` (RFC 9449 §7.1). */
  const readWith = (by: DpopKey, token: string): Promise<Response> => by.send('GET', notesUrl(), async (proof) => fetch(notesUrl(), { headers: { authorization: `DPoP ${token}`, dpop: proof } }), token);
  const readAsBearer = (token: string): Promise<Response> => fetch(notesUrl(), { headers: { authorization: `Bearer ${token}` } });

  beforeAll(async () => {
    ({ nest } = await startAtIssuer({ RATE_LIMIT_CLIENT_PER_MINUTE: '0' }));
    world = await setUpExchangeWorld(nest, new URL(process.env.ISSUER!));
    key = await newDpopKey();
    const person = await personTokens(world, 'notes:read notes:write', new Browser(world.issuer.origin), key);
    expect(person.token_type).toBe('DPoP');
    bound = person.access_token as string;
  });
  afterAll(async () => {
    await nest?.close();
    await dropTestDatabase();
  });

  const refused = (attempt: () => Promise<Reply>, error: string): Promise<void> => expectRefusedWithoutWrites(world, attempt, error);

  it('the subject token is bound: the API refuses it as a bearer token and takes it with a proof of the key', async () => {
    expect((await readAsBearer(bound)).status).toBe(401);
    expect((await readWith(key, bound)).status).toBe(200);
  });

  it('without a DPoP proof, the exchange is invalid_dpop_proof', async () => {
    await refused(() => exchange(world, world.gateway, bound, [world.self]), 'invalid_dpop_proof');
  });

  it('with a proof of another key, the exchange is invalid_dpop_proof', async () => {
    const other = await newDpopKey();
    await refused(() => exchangeWith(other, bound), 'invalid_dpop_proof');
  });

  it('with a proof of the same key, the issued token is bound to that key and opens the API only with a proof of it', async () => {
    const reply = await exchangeWith(key, bound);
    expect({ status: reply.status, token_type: reply.body.token_type }).toEqual({ status: 200, token_type: 'DPoP' });
    const token = reply.body.access_token as string;
    expect(await introspect(world, world.orders, token)).toMatchObject({ active: true, token_type: 'DPoP', cnf: { jkt: key.jkt } });
    expect((await readWith(key, token)).status).toBe(200);
    expect((await readAsBearer(token)).status).toBe(401);
    expect((await readWith(await newDpopKey(), token)).status).toBe(401);
  });

  it('a MAC subject token is invalid_request: no token request can prove its mac_key (RFC 8693 §2.2.2)', async () => {
    const { client, secret } = await nest.get(ClientsService).create({
      name: 'MAC gateway',
      redirectUris: [REDIRECT_URI],
      scope: 'notes:read notes:write',
      grantTypes: ['authorization_code', TOKEN_EXCHANGE] as never,
      accessTokenType: TokenType.Mac,
    });
    const macGateway = { clientId: client.id, secret: secret! };
    const person = await personTokens({ ...world, gateway: macGateway });
    expect(person.token_type).toBe(TokenType.Mac);
    await refused(() => exchange(world, macGateway, person.access_token as string, [world.self]), 'invalid_request');
  });
});
