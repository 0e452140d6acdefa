/**
 * Issue 34's check of a chain of three services, on three instances of one database (PostgreSQL
 * when TEST_DATABASE_URL names one; SQLite otherwise, where the same holds trivially): the person's
 * token for service A; A exchanges it for B on another instance (opaque, introspected by B); B
 * exchanges that for a JWT for C on the third, which C validates offline with a stock JWT library
 * and reads the nested act; the person signs out and every token in the chain is inactive on every
 * instance, though each instance had the tokens in its cache (NotifiedCache on PostgreSQL).
 */
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { startAtIssuer, startAnotherInstance } from '../helpers/app-at-issuer.js';
import { Browser, hiddenFields } from '../helpers/browser.js';
import { dropTestDatabase } from '../helpers/test-database.js';
import { exchange, introspect, LEDGER, ORDERS, personTokens, setUpExchangeWorld, type ExchangeWorld, type Party } from '../helpers/token-exchange.js';
import { within } from '../helpers/within.js';


describe('a chain of three services on three instances (issue 34)', () => {
  let first: NestFastifyApplication;
  const others: NestFastifyApplication[] = [];
  let world: ExchangeWorld;
  /** The same world, its requests sent to each instance in turn. */
  let at: ExchangeWorld[];

  beforeAll(async () => {
    ({ nest: first } = await startAtIssuer({ RATE_LIMIT_CLIENT_PER_MINUTE: '0' }));
    world = await setUpExchangeWorld(first, new URL(process.env.ISSUER!));
    const bases = [world.issuer];
    // Two more instances on the same database and issuer, as behind a load balancer.
    for (let i = 0; i < 2; i++) {
      const { nest, baseUrl } = await startAnotherInstance();
      others.push(nest);
      bases.push(new URL(baseUrl));
    }
    at = bases.map((issuer) => ({ ...world, issuer }));
  });
  afterAll(async () => {
    for (const nest of others) await nest.close();
    await first?.close();
    await dropTestDatabase();
  });

  /** `token` as `caller` introspects it on every instance (which also warms each one's cache). */
  const everywhere = (caller: Party, token: string): Promise<Record<string, unknown>[]> => Promise.all(at.map((instance) => introspect(instance, caller, token)));

  it('A → B (opaque) → C (JWT, checked offline with nested act); sign-out ends the chain on every instance', async () => {
    const browser = new Browser(world.issuer.origin);
    const person = await personTokens(at[0], 'openid notes:read', browser);
    const forOrders = await exchange(at[1], world.gateway, person.access_token as string, [ORDERS]);
    expect(forOrders.status).toBe(200);
    const ordersToken = forOrders.body.access_token as string;
    for (const view of await everywhere(world.orders, ordersToken)) expect(view).toMatchObject({ active: true, aud: [ORDERS], act: { sub: world.gateway.clientId }, client_id: world.gateway.clientId });

    const forLedger = await exchange(at[2], world.orders, ordersToken, [LEDGER]);
    expect(forLedger.status).toBe(200);
    const ledgerToken = forLedger.body.access_token as string;
    const { payload } = await jwtVerify(ledgerToken, createRemoteJWKSet(new URL('/.well-known/jwks.json', at[2].issuer)), { issuer: world.self, audience: LEDGER, typ: 'at+jwt' });
    expect(payload.act).toEqual({ sub: world.orders.clientId, act: { sub: world.gateway.clientId } });
    for (const view of await everywhere(world.ledger, ledgerToken)) expect(view.active).toBe(true);
    for (const view of await everywhere(world.orders, person.access_token as string)) expect(view.active).toBe(true);

    // The person signs out (the sign-out form of the session that made the grant).
    await browser.post('/logout', { csrf_token: hiddenFields((await browser.get('/account')).body, '/logout').csrf_token });
    // Within the time a notification takes (row-caches.e2e-spec), never the cache's 60 s.
    const inactive = async (): Promise<boolean> => {
      const views = [...(await everywhere(world.orders, person.access_token as string)), ...(await everywhere(world.orders, ordersToken)), ...(await everywhere(world.ledger, ledgerToken))];
      return views.every((view) => view.active === false);
    };
    expect(await within(1_000, inactive)).toBe(true);
  });
});
