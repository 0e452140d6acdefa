import { expect } from '@jest/globals';
/**
 * The world of the token exchange tests (RFC 8693): a person, and a chain of services as an
 * administrator sets it up. Service A (the gateway) signs the person in and calls service B
 * (orders, opaque tokens); B calls C (ledger, RFC 9068 JWTs); C may call Latchkey's own API. Each
 * resource server introspects with its service's client, and each service that passes the person
 * on is registered for token exchange.
 */
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { getDataSourceToken } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { AuditEvent } from '../../src/audit/audit-event.entity.js';
import { ClientsService } from '../../src/clients/clients.service.js';
import type { GrantType } from '../../src/common/oauth.constants.js';
import { ResourceServersService } from '../../src/resource-servers/resource-servers.service.js';
import { Token } from '../../src/tokens/token.entity.js';
import { UsersService } from '../../src/users/users.service.js';
import { Browser } from './browser.js';
import type { DpopKey } from './dpop-key.js';
import { authorizeAsUser, basicAuth, newPkce, redirectParams } from './oauth-flow.js';
import type { TestUser } from './test-app.js';

export const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
export const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';
export const REDIRECT_URI = 'http://127.0.0.1:9/callback';
/** Service B's API: opaque tokens, checked at /introspect. */
export const ORDERS = 'https://orders.example.com/api';
/** Service C's API: RFC 9068 JWT access tokens, checked offline. */
export const LEDGER = 'https://ledger.example.com/v2';

export interface Party {
  clientId: string;
  secret: string;
}

export interface ExchangeWorld {
  nest: NestFastifyApplication;
  issuer: URL;
  /** Latchkey's own APIs as a resource: the issuer identifier. */
  self: string;
  user: TestUser;
  userId: string;
  /** Service A: signs the person in (authorization code), may exchange. */
  gateway: Party;
  /** Service B: the introspector of ORDERS, may exchange. */
  orders: Party;
  /** Service C: the introspector of LEDGER, may exchange (to call Latchkey's API). */
  ledger: Party;
  /** A confidential client not registered for token exchange. */
  outsider: Party;
}

export interface Reply {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
}

async function party(clients: ClientsService, name: string, scope: string, grantTypes: string[], redirectUris: string[] = []): Promise<Party> {
  const { client, secret } = await clients.create({ name, redirectUris, scope, grantTypes: grantTypes as GrantType[] });
  return { clientId: client.id, secret: secret! };
}

/** Registers the parties on the running app `nest` (its issuer: `issuer`). */
export async function setUpExchangeWorld(nest: NestFastifyApplication, issuer: URL): Promise<ExchangeWorld> {
  const user = { username: `alice_${Date.now().toString(36)}`, password: 'correct horse battery staple' };
  const userId = (await nest.get(UsersService).create(user.username, user.password)).id;
  const clients = nest.get(ClientsService);
  const gateway = await party(clients, 'Gateway (A)', 'notes:read notes:write', ['authorization_code', 'refresh_token', 'client_credentials', TOKEN_EXCHANGE], [REDIRECT_URI]);
  // What an exchange issues lies within the exchanging service's registration too (RFC 8693 §5): B and C may hold notes:read for a person.
  const orders = await party(clients, 'Orders (B)', 'tokens:introspect notes:read', ['client_credentials', TOKEN_EXCHANGE]);
  const ledger = await party(clients, 'Ledger (C)', 'tokens:introspect notes:read', ['client_credentials', TOKEN_EXCHANGE]);
  const outsider = await party(clients, 'Outsider', 'tokens:introspect notes:read', ['client_credentials']);
  const servers = nest.get(ResourceServersService);
  await servers.register({ uri: ORDERS, name: 'Orders', introspector: orders.clientId }, 'test');
  await servers.register({ uri: LEDGER, name: 'Ledger', accessTokenFormat: 'jwt', introspector: ledger.clientId }, 'test');
  return { nest, issuer, self: issuer.href.replace(/\/$/, ''), user, userId, gateway, orders, ledger, outsider };
}

/** POST `path` (a form) as `caller` with HTTP Basic. */
export async function postForm(world: ExchangeWorld, path: string, caller: Party, form: URLSearchParams | Record<string, string>, headers: Record<string, string> = {}): Promise<Reply> {
  const response = await fetch(new URL(path, world.issuer), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basicAuth(caller.clientId, caller.secret), ...headers },
    body: new URLSearchParams(form).toString(),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

/** The person signs in at the gateway (authorization code with PKCE); the token response, bound to `dpop` when given (RFC 9449 §5). */
export async function personTokens(world: ExchangeWorld, scope = 'notes:read notes:write', browser = new Browser(world.issuer.origin), dpop?: DpopKey): Promise<Record<string, unknown>> {
  const pkce = newPkce();
  const url = new URL('/authorize', world.issuer);
  for (const [name, value] of Object.entries({ client_id: world.gateway.clientId, response_type: 'code', redirect_uri: REDIRECT_URI, scope, state: 's', code_challenge: pkce.challenge, code_challenge_method: 'S256' })) {
    url.searchParams.set(name, value);
  }
  const code = redirectParams(await authorizeAsUser(browser, world.user, url.href)).get('code');
  if (!code) throw new Error('no code');
  const form = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, code_verifier: pkce.verifier };
  const reply = dpop ? await dpop.send('POST', new URL('/token', world.issuer), (proof) => postForm(world, '/token', world.gateway, form, { dpop: proof })) : await postForm(world, '/token', world.gateway, form);
  if (reply.status !== 200) throw new Error(`/token answered ${reply.status}: ${JSON.stringify(reply.body)}`);
  return reply.body;
}

/** A token exchange by `caller` (RFC 8693 §2.1) of `subjectToken` for `targets` (resource parameters), with `extra` parameters. */
export function exchange(world: ExchangeWorld, caller: Party, subjectToken: string, targets: string[], extra: Record<string, string> = {}, headers: Record<string, string> = {}): Promise<Reply> {
  const form = new URLSearchParams({ grant_type: TOKEN_EXCHANGE, subject_token: subjectToken, subject_token_type: ACCESS_TOKEN_TYPE, ...extra });
  for (const target of targets) form.append('resource', target);
  return postForm(world, '/token', caller, form, headers);
}

/** What /introspect tells `caller` about `token`. */
export async function introspect(world: ExchangeWorld, caller: Party, token: string): Promise<Record<string, unknown>> {
  const reply = await postForm(world, '/introspect', caller, { token });
  if (reply.status !== 200) throw new Error(`/introspect answered ${reply.status}`);
  return reply.body;
}

/** A client_credentials token of `caller`. */
export async function ownToken(world: ExchangeWorld, caller: Party): Promise<string> {
  const reply = await postForm(world, '/token', caller, { grant_type: 'client_credentials' });
  if (reply.status !== 200) throw new Error(`/token answered ${reply.status}: ${JSON.stringify(reply.body)}`);
  return reply.body.access_token as string;
}

/** Rows of the tokens and audit tables: what a refused request must leave as it found it. */
export async function rowCounts(world: ExchangeWorld): Promise<{ tokens: number; audit: number }> {
  const dataSource = world.nest.get<DataSource>(getDataSourceToken());
  return { tokens: await dataSource.getRepository(Token).count(), audit: await dataSource.getRepository(AuditEvent).count() };
}

/** `attempt` is refused with 400 `error`, issues no token and writes nothing (tokens, audit). */
export async function expectRefusedWithoutWrites(world: ExchangeWorld, attempt: () => Promise<Reply>, error: string): Promise<void> {
  const before = await rowCounts(world);
  const reply = await attempt();
  expect({ status: reply.status, error: reply.body.error }).toEqual({ status: 400, error });
  expect(reply.body.access_token).toBeUndefined();
  expect(await rowCounts(world)).toEqual(before);
}

/**
 * Whether every one of `tokens` (each with the client that introspects it) is inactive within 1 s:
 * on PostgreSQL an instance drops a cached token when the revocation's notification reaches it,
 * in the time a notification takes, never the cache's 60 s (row-caches.e2e-spec).
 */
export async function inactiveSoon(world: ExchangeWorld, tokens: [Party, string][]): Promise<boolean> {
  const deadline = Date.now() + 1_000;
  for (;;) {
    const views = await Promise.all(tokens.map(([caller, token]) => introspect(world, caller, token)));
    if (views.every((view) => view.active === false && Object.keys(view).length === 1)) return true;
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
