/**
 * Token exchange (RFC 8693) over real HTTP, through a chain of services: a person's token for
 * service A; A exchanges it for a token for B (opaque, introspected by B's introspector); B
 * exchanges that for an RFC 9068 JWT for C, which a stock JWT library (jose) checks offline against
 * the JWKS, reading the nested act; C exchanges again for Latchkey's own API. Then: scope narrows,
 * lifetime is capped, an exchanged token may be DPoP-bound, and revoking the subject token or its
 * grant (/revoke, refresh token reuse, sign-out) makes every token of the chain inactive.
 */
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { jest } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { calculateJwkThumbprint, createRemoteJWKSet, exportJWK, generateKeyPair, jwtVerify, SignJWT } from 'jose';
import { Clock } from '../../src/common/clock.js';
import { AuditService } from '../../src/audit/audit.service.js';
import { ClientsService } from '../../src/clients/clients.service.js';
import { AccessWithdrawalService } from '../../src/consents/access-withdrawal.service.js';
import { startAtIssuer } from '../helpers/app-at-issuer.js';
import { Browser, hiddenFields } from '../helpers/browser.js';
import { dropTestDatabase } from '../helpers/test-database.js';
import { ACCESS_TOKEN_TYPE, exchange, inactiveSoon, introspect, LEDGER, ORDERS, ownToken, personTokens, postForm, REDIRECT_URI, setUpExchangeWorld, TOKEN_EXCHANGE, type ExchangeWorld } from '../helpers/token-exchange.js';

describe('Token exchange (RFC 8693)', () => {
  let nest: NestFastifyApplication;
  let world: ExchangeWorld;

  const readNotes = (token: string): Promise<Response> => fetch(new URL('/api/v1/notes', world.issuer), { headers: { authorization: `Bearer ${token}` } });

  /** The chain of issue 34: the person's token (A), A → B (opaque), B → C (JWT); each token's value. */
  async function chain(): Promise<{ person: Record<string, unknown>; forOrders: string; forLedger: string }> {
    const person = await personTokens(world);
    const toOrders = await exchange(world, world.gateway, person.access_token as string, [ORDERS], { scope: 'notes:read' });
    expect(toOrders.status).toBe(200);
    const toLedger = await exchange(world, world.orders, toOrders.body.access_token as string, [LEDGER]);
    expect(toLedger.status).toBe(200);
    return { person, forOrders: toOrders.body.access_token as string, forLedger: toLedger.body.access_token as string };
  }

  beforeAll(async () => {
    ({ nest } = await startAtIssuer({ RATE_LIMIT_CLIENT_PER_MINUTE: '0' }));
    world = await setUpExchangeWorld(nest, new URL(process.env.ISSUER!));
  });
  afterEach(() => jest.restoreAllMocks());
  afterAll(async () => {
    await nest?.close();
    await dropTestDatabase();
  });

  it('the metadata lists the grant (RFC 8414 grant_types_supported)', async () => {
    const metadata = (await (await fetch(new URL('/.well-known/oauth-authorization-server', world.issuer))).json()) as Record<string, unknown>;
    expect(metadata.grant_types_supported).toContain(TOKEN_EXCHANGE);
  });

  it('A exchanges the person\'s token for B: an opaque access token for B alone, acting as A, introspected by B with act, aud, client_id and sub', async () => {
    const person = await personTokens(world);
    const personView = await introspect(world, world.orders, person.access_token as string);
    const reply = await exchange(world, world.gateway, person.access_token as string, [ORDERS], { scope: 'notes:read' });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ issued_token_type: ACCESS_TOKEN_TYPE, token_type: 'bearer', scope: 'notes:read' });
    expect(reply.body.refresh_token).toBeUndefined();
    const token = reply.body.access_token as string;
    expect(token.split('.')).not.toHaveLength(3);
    expect(reply.body.expires_in).toBeLessThanOrEqual(person.expires_in as number);

    const view = await introspect(world, world.orders, token);
    expect(view).toMatchObject({ active: true, act: { sub: world.gateway.clientId }, aud: [ORDERS], client_id: world.gateway.clientId, sub: personView.sub, scope: 'notes:read' });
    // Only B's introspector sees a token for B (RFC 7662 §2.2).
    expect(await introspect(world, world.ledger, token)).toEqual({ active: false });
  });

  it('B exchanges it for C: a JWT that jose verifies offline against the JWKS, with the nested act; C exchanges again for Latchkey\'s API and reads the person\'s notes with three actors', async () => {
    const { person, forLedger } = await chain();
    const metadata = (await (await fetch(new URL('/.well-known/oauth-authorization-server', world.issuer))).json()) as { jwks_uri: string; issuer: string };
    const { payload, protectedHeader } = await jwtVerify(forLedger, createRemoteJWKSet(new URL(metadata.jwks_uri)), { issuer: metadata.issuer, audience: LEDGER, typ: 'at+jwt' });
    expect(protectedHeader.alg).toBe('RS256');
    expect(payload).toMatchObject({ client_id: world.orders.clientId, scope: 'notes:read', act: { sub: world.orders.clientId, act: { sub: world.gateway.clientId } } });
    expect(payload.sub).toBe((await introspect(world, world.orders, person.access_token as string)).sub);

    const toSelf = await exchange(world, world.ledger, forLedger, [world.self]);
    expect(toSelf.status).toBe(200);
    const view = await introspect(world, world.orders, toSelf.body.access_token as string);
    expect(view.act).toEqual({ sub: world.ledger.clientId, act: { sub: world.orders.clientId, act: { sub: world.gateway.clientId } } });
    expect((await readNotes(toSelf.body.access_token as string)).status).toBe(200);
  });

  it('audience is read as a resource identifier, like resource', async () => {
    const person = await personTokens(world);
    const reply = await exchange(world, world.gateway, person.access_token as string, [], { audience: ORDERS });
    expect(reply.status).toBe(200);
    expect((await introspect(world, world.orders, reply.body.access_token as string)).aud).toEqual([ORDERS]);
  });

  it('scope narrows; without scope the subject token\'s scope carries over', async () => {
    const person = await personTokens(world);
    const narrowed = await exchange(world, world.gateway, person.access_token as string, [ORDERS], { scope: 'notes:write' });
    expect(narrowed.body.scope).toBe('notes:write');
    const same = await exchange(world, world.gateway, person.access_token as string, [ORDERS]);
    expect(same.body.scope).toBe(person.scope);
  });

  it('the issued token lives no longer than the subject token has left', async () => {
    const person = await personTokens(world);
    const subjectExp = (await introspect(world, world.orders, person.access_token as string)).exp as number;
    const clock = nest.get(Clock);
    const later = new Date(Date.now() + ((person.expires_in as number) - 90) * 1000);
    jest.spyOn(clock, 'now').mockReturnValue(later);
    const reply = await exchange(world, world.gateway, person.access_token as string, [ORDERS]);
    expect(reply.status).toBe(200);
    expect(reply.body.expires_in).toBeLessThanOrEqual(90);
    jest.restoreAllMocks();
    expect((await introspect(world, world.orders, reply.body.access_token as string)).exp).toBeLessThanOrEqual(subjectExp);
  });

  it('with a DPoP proof the issued token is DPoP-bound (RFC 9449 §5), as with the other grants', async () => {
    const person = await personTokens(world);
    const { privateKey, publicKey } = await generateKeyPair('ES256');
    const jwk = await exportJWK(publicKey);
    const proof = (nonce?: string): Promise<string> =>
      new SignJWT({ jti: randomUUID(), htm: 'POST', htu: new URL('/token', world.issuer).href, iat: Math.floor(Date.now() / 1000), ...(nonce ? { nonce } : {}) })
        .setProtectedHeader({ typ: 'dpop+jwt', alg: 'ES256', jwk })
        .sign(privateKey);
    // RFC 9449 §8: the server asks for its nonce first; the proof is made again with it.
    let reply = await exchange(world, world.gateway, person.access_token as string, [ORDERS], {}, { dpop: await proof() });
    if (reply.body.error === 'use_dpop_nonce') reply = await exchange(world, world.gateway, person.access_token as string, [ORDERS], {}, { dpop: await proof(reply.headers.get('dpop-nonce')!) });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ token_type: 'DPoP', issued_token_type: ACCESS_TOKEN_TYPE });
    const view = await introspect(world, world.orders, reply.body.access_token as string);
    expect(view).toMatchObject({ active: true, token_type: 'DPoP', cnf: { jkt: await calculateJwkThumbprint(jwk) } });
  });

  it('an actor token of the acting client (client_credentials) is accepted; act still names the client', async () => {
    const person = await personTokens(world);
    const reply = await exchange(world, world.gateway, person.access_token as string, [ORDERS], { actor_token: await ownToken(world, world.gateway), actor_token_type: ACCESS_TOKEN_TYPE });
    expect(reply.status).toBe(200);
    expect((await introspect(world, world.orders, reply.body.access_token as string)).act).toEqual({ sub: world.gateway.clientId });
  });

  it('the audit trail records each exchange (subject client, acting client, target, scope), never a token', async () => {
    const person = await personTokens(world);
    const reply = await exchange(world, world.gateway, person.access_token as string, [world.self], { scope: 'notes:write' });
    // Found by what only this exchange asked for (an earlier test moved the clock, so "newest" is not it).
    const events = (await nest.get(AuditService).list(500)).filter((e) => e.action === 'token.exchanged' && e.details.scope === 'notes:write' && JSON.stringify(e.details.target) === JSON.stringify([world.self]));
    expect(events).toHaveLength(1);
    const [event] = events;
    expect(event).toMatchObject({ actor: `client:${world.gateway.clientId}`, details: { subject_client: world.gateway.clientId, acting_client: world.gateway.clientId, target: [world.self], scope: 'notes:write', user: world.userId } });
    const text = JSON.stringify(event);
    expect(text).not.toContain(person.access_token as string);
    expect(text).not.toContain(reply.body.access_token as string);
  });

  describe('revocation reaches the whole chain', () => {
    const inactive = async (tokens: { forOrders: string; forLedger: string }): Promise<void> => {
      expect(await inactiveSoon(world, [[world.orders, tokens.forOrders], [world.ledger, tokens.forLedger]])).toBe(true);
    };

    it('/revoke of the subject token (RFC 7009) makes every token exchanged from it inactive, at any depth', async () => {
      const tokens = await chain();
      expect((await introspect(world, world.ledger, tokens.forLedger)).active).toBe(true);
      const revoked = await postForm(world, '/revoke', world.gateway, { token: tokens.person.access_token as string });
      expect(revoked.status).toBe(200);
      await inactive(tokens);
      // Revoking a token in the middle ends its descendants and leaves the others alone.
      const other = await chain();
      await postForm(world, '/revoke', world.gateway, { token: other.forOrders });
      expect((await introspect(world, world.orders, other.person.access_token as string)).active).toBe(true);
      await inactive(other);
    });

    it('refresh token reuse revokes the family (RFC 9700 §4.14.2), and the exchanged tokens with it', async () => {
      const tokens = await chain();
      const refresh = tokens.person.refresh_token as string;
      expect((await postForm(world, '/token', world.gateway, { grant_type: 'refresh_token', refresh_token: refresh })).status).toBe(200);
      expect((await postForm(world, '/token', world.gateway, { grant_type: 'refresh_token', refresh_token: refresh })).body.error).toBe('invalid_grant');
      await inactive(tokens);
    });

    it('sign-out: when the person\'s session ends, the access tokens of its grants and every token exchanged from them end too; a grant with offline_access goes on', async () => {
      const browser = new Browser(world.issuer.origin);
      const person = await personTokens(world, 'openid notes:read', browser);
      const offline = await personTokens(world, 'openid offline_access notes:read', browser);
      const forOrders = (await exchange(world, world.gateway, person.access_token as string, [ORDERS])).body.access_token as string;
      const offlineForOrders = (await exchange(world, world.gateway, offline.access_token as string, [ORDERS])).body.access_token as string;
      expect((await introspect(world, world.orders, forOrders)).active).toBe(true);
      // The person signs out (the sign-out form of the session both grants were made in).
      await browser.post('/logout', { csrf_token: hiddenFields((await browser.get('/account')).body, '/logout').csrf_token });
      expect(await inactiveSoon(world, [[world.orders, person.access_token as string], [world.orders, forOrders]])).toBe(true);
      expect((await introspect(world, world.orders, offline.access_token as string)).active).toBe(true);
      expect((await introspect(world, world.orders, offlineForOrders)).active).toBe(true);
    });

    it('the person withdraws the gateway\'s access (/account/access): the tokens exchanged from its tokens end too', async () => {
      const tokens = await chain();
      await nest.get(AccessWithdrawalService).withdraw(world.userId, world.gateway.clientId);
      await inactive(tokens);
    });

    it('an administrator deletes the gateway: the tokens other services exchanged from its tokens are revoked, at any depth', async () => {
      const clients = nest.get(ClientsService);
      const created = await clients.create({ name: 'Gateway 2', redirectUris: [REDIRECT_URI], scope: 'notes:read', grantTypes: ['authorization_code', TOKEN_EXCHANGE] as never });
      const gateway = { clientId: created.client.id, secret: created.secret! };
      const person = await personTokens({ ...world, gateway }, 'notes:read');
      const forOrders = (await exchange(world, gateway, person.access_token as string, [ORDERS])).body.access_token as string;
      const forLedger = (await exchange(world, world.orders, forOrders, [LEDGER])).body.access_token as string;
      expect((await introspect(world, world.ledger, forLedger)).active).toBe(true);
      await clients.delete(gateway.clientId);
      // Its own tokens went with it (ON DELETE CASCADE); B's and C's were revoked.
      expect(await inactiveSoon(world, [[world.ledger, forLedger], [world.orders, forOrders]])).toBe(true);
    });

    it('a JWT checked offline cannot be recalled: the signature still verifies after revocation, only introspection knows (docs/guides/token-exchange.md)', async () => {
      const tokens = await chain();
      await postForm(world, '/revoke', world.gateway, { token: tokens.person.access_token as string });
      expect(await inactiveSoon(world, [[world.ledger, tokens.forLedger]])).toBe(true);
      // A resource server checking signatures alone still accepts it until exp (RFC 9068 §5 leaves revocation to introspection).
      const jwks = createRemoteJWKSet(new URL('/.well-known/jwks.json', world.issuer));
      const { payload } = await jwtVerify(tokens.forLedger, jwks, { issuer: world.self, audience: LEDGER, typ: 'at+jwt' });
      expect(payload.exp! - Math.floor(Date.now() / 1000)).toBeLessThanOrEqual(tokens.person.expires_in as number);
    });
  });
});
