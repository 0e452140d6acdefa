/**
 * Token exchange (RFC 8693) as privilege escalation, refused: a wider scope than the subject token's
 * or the exchanging client's registration, or an audience that is not ours, a token the client never received, an actor token of another client, a client not
 * registered for the grant (nor able to register itself for it), and a token that would act for
 * the person without saying who acts. Every refusal leaves the tokens and audit tables as they were.
 */
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { getDataSourceToken } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { ClientsService } from '../../src/clients/clients.service.js';
import { generateSecret, SECRET_PREFIX } from '../../src/common/secrets.js';
import { startAtIssuer } from '../helpers/app-at-issuer.js';
import { runCli } from '../helpers/cli.js';
import { dropTestDatabase } from '../helpers/test-database.js';
import { ACCESS_TOKEN_TYPE, exchange, expectRefusedWithoutWrites, inactiveSoon, introspect, LEDGER, ORDERS, ownToken, personTokens, postForm, setUpExchangeWorld, TOKEN_EXCHANGE, type ExchangeWorld, type Reply } from '../helpers/token-exchange.js';

describe('token exchange cannot escalate (RFC 8693 §2.2.2, §4.1)', () => {
  let nest: NestFastifyApplication;
  let world: ExchangeWorld;
  /** A person's token issued to the gateway (A), restricted to nothing. */
  let personToken: string;
  /** The gateway's exchange of it for ORDERS (B's). */
  let ordersToken: string;

  beforeAll(async () => {
    ({ nest } = await startAtIssuer({ RATE_LIMIT_CLIENT_PER_MINUTE: '0' }));
    world = await setUpExchangeWorld(nest, new URL(process.env.ISSUER!));
    personToken = (await personTokens(world, 'notes:read')).access_token as string;
    const toOrders = await exchange(world, world.gateway, personToken, [ORDERS]);
    expect(toOrders.status).toBe(200);
    ordersToken = toOrders.body.access_token as string;
  });
  afterAll(async () => {
    await nest?.close();
    await dropTestDatabase();
  });

  const refused = (attempt: () => Promise<Reply>, error: string): Promise<void> => expectRefusedWithoutWrites(world, attempt, error);

  it('a wider scope than the subject token\'s is invalid_scope', async () => {
    await refused(() => exchange(world, world.gateway, personToken, [ORDERS], { scope: 'notes:read notes:write' }), 'invalid_scope');
    await refused(() => exchange(world, world.orders, ordersToken, [LEDGER], { scope: 'notes:read tokens:introspect' }), 'invalid_scope');
  });

  describe('the exchanging client\'s registration bounds the scope too (RFC 8693 §2.1, §5; RFC 6749 §3.3)', () => {
    /** The person's notes:read notes:write token, exchanged by the gateway for orders without narrowing it. */
    let wideForOrders: string;
    const writeNote = (token: string): Promise<Response> =>
      fetch(new URL('/api/v1/notes', world.issuer), { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ title: 'written by orders' }) });

    beforeAll(async () => {
      const wide = await exchange(world, world.gateway, (await personTokens(world)).access_token as string, [ORDERS]);
      expect({ status: wide.status, scope: wide.body.scope }).toEqual({ status: 200, scope: 'notes:read notes:write' });
      wideForOrders = wide.body.access_token as string;
    });

    it('a scope the subject token holds but the client never registered is invalid_scope (orders, registered for notes:read, asks for notes:write)', async () => {
      await refused(() => exchange(world, world.orders, wideForOrders, [world.self], { scope: 'notes:write' }), 'invalid_scope');
      await refused(() => exchange(world, world.orders, wideForOrders, [world.self], { scope: 'notes:read notes:write' }), 'invalid_scope');
    });

    it('without scope, the token carries what both allow: notes:read, which cannot write the person\'s notes', async () => {
      const reply = await exchange(world, world.orders, wideForOrders, [world.self]);
      expect({ status: reply.status, scope: reply.body.scope }).toEqual({ status: 200, scope: 'notes:read' });
      expect((await writeNote(reply.body.access_token as string)).status).toBe(403);
    });

    it('when the subject token and the registration share nothing, invalid_scope, with scope or without', async () => {
      const writeOnly = await exchange(world, world.gateway, (await personTokens(world)).access_token as string, [ORDERS], { scope: 'notes:write' });
      expect(writeOnly.status).toBe(200);
      await refused(() => exchange(world, world.orders, writeOnly.body.access_token as string, [world.self]), 'invalid_scope');
      await refused(() => exchange(world, world.orders, writeOnly.body.access_token as string, [world.self], { scope: '' }), 'invalid_scope');
    });
  });

  it.each([
    ['an unregistered resource server', ['https://evil.example.com/api']],
    ['a URI with a fragment', [`${ORDERS}#x`]],
    ['a relative URI', ['/api']],
    ['a registered one beside an unknown one', [ORDERS, 'https://unknown.example.com/']],
  ])('%s as target is invalid_target', async (_case, targets) => {
    await refused(() => exchange(world, world.gateway, personToken, targets), 'invalid_target');
  });

  it('an unknown audience is invalid_target; no target at all is invalid_request', async () => {
    await refused(() => exchange(world, world.gateway, personToken, [], { audience: 'https://evil.example.com/api' }), 'invalid_target');
    await refused(() => exchange(world, world.gateway, personToken, []), 'invalid_request');
  });

  describe('a subject token the client never received is invalid_request', () => {
    it('B presents the person\'s token issued to A, not restricted to B', async () => {
      await refused(() => exchange(world, world.orders, personToken, [LEDGER]), 'invalid_request');
    });

    it('C presents the token restricted to B (it is not C\'s introspector\'s)', async () => {
      await refused(() => exchange(world, world.ledger, ordersToken, [world.self]), 'invalid_request');
    });

    it('a token restricted to Latchkey\'s own API is nobody\'s but its client\'s', async () => {
      const toSelf = await exchange(world, world.gateway, personToken, [world.self]);
      await refused(() => exchange(world, world.orders, toSelf.body.access_token as string, [LEDGER]), 'invalid_request');
    });

    it.each([
      ['a made-up value', () => 'lk_at_not-a-token'],
      ['a refresh token', () => 'refresh'],
      ['a client_credentials token (no person to act for)', () => 'own'],
    ])('%s', async (_case, which) => {
      const kind = which();
      const value = kind === 'refresh' ? ((await personTokens(world)).refresh_token as string) : kind === 'own' ? await ownToken(world, world.gateway) : kind;
      await refused(() => exchange(world, world.gateway, value, [ORDERS]), 'invalid_request');
    });

    it('a revoked subject token', async () => {
      const token = (await personTokens(world)).access_token as string;
      await postForm(world, '/revoke', world.gateway, { token });
      // On PostgreSQL, once the revocation's notification has reached this instance's cache.
      expect(await inactiveSoon(world, [[world.orders, token]])).toBe(true);
      await refused(() => exchange(world, world.gateway, token, [ORDERS]), 'invalid_request');
    });

    it.each([
      ['subject_token missing', { subject_token: '' }],
      ['subject_token_type missing', { subject_token_type: '' }],
      ['subject_token_type of an ID token', { subject_token_type: 'urn:ietf:params:oauth:token-type:id_token' }],
      ['requested_token_type of a refresh token', { requested_token_type: 'urn:ietf:params:oauth:token-type:refresh_token' }],
      ['actor_token_type without actor_token', { actor_token_type: ACCESS_TOKEN_TYPE }],
    ])('%s', async (_case, change) => {
      await refused(() => exchange(world, world.gateway, personToken, [ORDERS], change), 'invalid_request');
    });
  });

  it('an actor token of another client, or one that is a person\'s, is invalid_request', async () => {
    const others = await ownToken(world, world.orders);
    await refused(() => exchange(world, world.gateway, personToken, [ORDERS], { actor_token: others, actor_token_type: ACCESS_TOKEN_TYPE }), 'invalid_request');
    await refused(() => exchange(world, world.gateway, personToken, [ORDERS], { actor_token: personToken, actor_token_type: ACCESS_TOKEN_TYPE }), 'invalid_request');
  });

  it('a client not registered for the grant is unauthorized_client', async () => {
    await refused(() => exchange(world, world.outsider, personToken, [ORDERS]), 'unauthorized_client');
  });

  it('an administrator registers a service for it with the CLI (clients:create --grant-type); a public client cannot have it', async () => {
    const created = await runCli(['clients:create', '--name', 'Reports (D)', '--scope', 'tokens:introspect', '--grant-type', 'client_credentials', '--grant-type', TOKEN_EXCHANGE]);
    expect(created.code).toBe(0);
    const view = JSON.parse(created.stdout) as { client_id: string; client_secret: string; grant_types: string[] };
    expect(view.grant_types).toContain(TOKEN_EXCHANGE);
    // It may exchange only what it received: nothing yet.
    await refused(() => exchange(world, { clientId: view.client_id, secret: view.client_secret }, personToken, [ORDERS]), 'invalid_request');
    const publicClient = await runCli(['clients:create', '--name', 'SPA', '--public', '--redirect-uri', 'http://127.0.0.1:9/spa', '--grant-type', 'authorization_code', '--grant-type', TOKEN_EXCHANGE]);
    expect(publicClient.code).not.toBe(0);
    expect(publicClient.stderr).toContain('A public client cannot use the token exchange grant');
  });

  it('RFC 7592 self-management cannot add the grant: invalid_client_metadata, the row unchanged', async () => {
    const registrationToken = generateSecret(SECRET_PREFIX.registrationToken);
    const { client } = await nest.get(ClientsService).create({ name: 'Self-managed', redirectUris: [], scope: 'notes:read', grantTypes: ['client_credentials'] as never }, undefined, { registrationToken });
    const dataSource = nest.get<DataSource>(getDataSourceToken());
    const row = async (): Promise<unknown> => (await dataSource.query(`SELECT * FROM "clients" WHERE "id" = ${dataSource.options.type === 'postgres' ? '$1' : '?'}`, [client.id]))[0];
    const before = await row();
    const response = await fetch(new URL(`/register/${client.id}`, world.issuer), {
      method: 'PUT',
      headers: { authorization: `Bearer ${registrationToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ client_id: client.id, client_name: 'Self-managed', redirect_uris: [], scope: 'notes:read', grant_types: ['client_credentials', TOKEN_EXCHANGE] }),
    });
    const body = (await response.json()) as Record<string, unknown>;
    expect({ status: response.status, error: body.error }).toEqual({ status: 400, error: 'invalid_client_metadata' });
    expect(body.error_description).toContain(TOKEN_EXCHANGE);
    expect(await row()).toEqual(before);
  });

  it('no impersonation: every issued token says who acts (act), also when the acting client is the one the person signed in to', async () => {
    const own = await exchange(world, world.gateway, personToken, [world.self]);
    expect((await introspect(world, world.orders, own.body.access_token as string)).act).toEqual({ sub: world.gateway.clientId });
    const chained = await exchange(world, world.orders, ordersToken, [LEDGER]);
    const payload = JSON.parse(Buffer.from((chained.body.access_token as string).split('.')[1], 'base64url').toString()) as Record<string, unknown>;
    expect(payload.act).toEqual({ sub: world.orders.clientId, act: { sub: world.gateway.clientId } });
    expect(payload.sub).not.toBe(world.orders.clientId);
  });
});
