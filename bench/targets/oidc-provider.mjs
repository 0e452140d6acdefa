/**
 * node-oidc-provider as the comparison point: bench/servers/oidc-provider-server.mjs, one process,
 * on its in-memory store (`oidcProvider()`, named oidc-provider) or on Redis
 * (`oidcProvider({ name: 'oidc-provider-redis', store: 'redis' })`, the adapter laid out as
 * oidc-provider's Redis example, keys under a prefix of the run's own, deleted when it stops).
 * The scenarios are the ones it shares with Latchkey, under its own names (bench/run.mjs maps
 * them to our letters): a userinfo read, a client_credentials token, a refresh
 * with rotation, a complete authorization-code flow in a logged-in session with consent remembered,
 * the same flow with a nonce and an RS256-signed ID token (a client of its own), an introspection,
 * the userinfo read with a DPoP-bound token and a proof per request, and a client_credentials token
 * for a private_key_jwt client with an assertion per request (its ES256 key is made here and its
 * public half handed to the server at start). Everything is set up over HTTP, as a browser and a
 * client would.
 */
import { createHash, randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assertionKey } from '../lib/client-assertion.mjs';
import { dpopKey, dpopTokenRequest } from '../lib/dpop.mjs';
import { basicAuth, CookieJar, expectIdToken, expectStatus, FORM, request } from '../lib/http.mjs';
import { startServer } from '../lib/processes.mjs';
import { DEFAULT_REDIS_URL, deleteKeys, randomPrefix } from '../servers/oidc-provider-redis-adapter.mjs';

// The same values as in the server.
const CLIENT_ID = 'bench-client';
// The openIdFlow scenario's client: the same, with ID tokens signed with RS256 instead of EdDSA.
const RS256_CLIENT_ID = 'bench-client-rs256';
// The privateKeyJwtClientCredentials scenario's client (private_key_jwt, client_credentials only).
const JWT_CLIENT_ID = 'bench-client-jwt';
const CLIENT_SECRET = 'bench-secret-0123456789abcdef0123456789';
const REDIRECT_URI = 'http://127.0.0.1/cb';
const USERNAME = 'bench';
const PASSWORD = 'bench-password';
// What the flow asks for. openid is needed for userinfo; offline_access is left out because
// oidc-provider only honours it with prompt=consent, which would make every authorization an
// interaction. The server issues a refresh token on every code exchange regardless, as Latchkey does.
const FLOW_SCOPE = 'openid';
// What a first, consenting authorization asks for: refresh tokens that outlive the session.
const OFFLINE_SCOPE = 'openid offline_access';
const API_SCOPE = 'api:read';

const AUTHORIZATION = basicAuth(CLIENT_ID, CLIENT_SECRET);

function tokenRequest(form, clientId = CLIENT_ID) {
  return {
    method: 'POST',
    path: '/token',
    headers: { authorization: clientId === CLIENT_ID ? AUTHORIZATION : basicAuth(clientId, CLIENT_SECRET), 'content-type': FORM },
    body: new URLSearchParams(form).toString(),
  };
}

function pkcePair() {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

function authorizePath({ scope, challenge, state, prompt, nonce, clientId = CLIENT_ID }) {
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT_URI,
    scope,
    state,
    code_challenge: challenge,
    code_challenge_method: 'S256',
  });
  if (prompt) query.set('prompt', prompt);
  if (nonce) query.set('nonce', nonce);
  return `/auth?${query}`;
}

/** The code from a redirect to the client, after checking it is one and carries our state. */
function codeFrom(response, state, what) {
  expectStatus(response, [302, 303], what);
  const location = new URL(response.headers.location, REDIRECT_URI);
  if (`${location.origin}${location.pathname}` !== REDIRECT_URI) throw new Error(`${what}: redirected to ${response.headers.location}`);
  const code = location.searchParams.get('code');
  if (!code || location.searchParams.get('state') !== state) throw new Error(`${what}: no code in ${response.headers.location}`);
  return code;
}

/** With a DPoP key, the code is redeemed with a proof of it (and the server's nonce): the access token is bound to the key. */
async function exchangeCode(baseUrl, code, verifier, clientId = CLIENT_ID, dpop = undefined) {
  const exchange = tokenRequest({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, code_verifier: verifier }, clientId);
  const response = dpop ? await dpopTokenRequest(baseUrl, dpop, exchange) : await request(baseUrl, exchange);
  return JSON.parse(expectStatus(response, 200, 'code exchange').body);
}

/**
 * A new browser: authorize with offline_access and prompt=consent → the interaction (the sign-in
 * form, posted with the bench user's password; it grants the requested scopes too) → back to the
 * authorization endpoint → the client's redirect with a code → the code exchange. Returns the
 * browser's cookies and the token response.
 */
async function signInAndConsent(baseUrl, clientId = CLIENT_ID) {
  const jar = new CookieJar();
  const { verifier, challenge } = pkcePair();
  const state = randomBytes(8).toString('hex');
  let response = jar.store(await request(baseUrl, { path: authorizePath({ scope: OFFLINE_SCOPE, challenge, state, prompt: 'consent', clientId }) }));
  expectStatus(response, [302, 303], 'authorize (first)');
  const interaction = new URL(response.headers.location, baseUrl).pathname;
  if (!interaction.startsWith('/interaction/')) throw new Error(`authorize (first): expected an interaction, got ${response.headers.location}`);

  const form = new URLSearchParams({ login: USERNAME, password: PASSWORD }).toString();
  response = jar.store(await request(baseUrl, { method: 'POST', path: interaction, headers: { cookie: jar.header(), 'content-type': FORM }, body: form }));
  expectStatus(response, 303, 'sign-in and consent');

  // Resuming the authorization sets the session cookie and redirects to the client.
  response = jar.store(await request(baseUrl, { path: new URL(response.headers.location, baseUrl).pathname, headers: { cookie: jar.header() } }));
  const tokens = await exchangeCode(baseUrl, codeFrom(response, state, 'authorize (resumed)'), verifier, clientId);
  return { jar, tokens };
}

/** Only the session's cookies (and their signatures): what a later authorization needs. */
function sessionCookie(jar) {
  const cookies = [...jar.cookies].filter(([name]) => name === '_session' || name === '_session.sig');
  if (cookies.length === 0) throw new Error('no session cookie after sign-in');
  return cookies.map(([name, value]) => `${name}=${value}`).join('; ');
}

/**
 * The target: `store` is `memory` (records in the server process) or `redis` (Redis at `redisUrl`,
 * REDIS_URL or redis://127.0.0.1:6379; every key under a prefix of this run's, deleted when the
 * server stops, by the server and again here should it have been killed).
 */
export function oidcProvider({ name = 'oidc-provider', store = 'memory', redisUrl = process.env.REDIS_URL || DEFAULT_REDIS_URL } = {}) {
  /** The private_key_jwt client's key: made at start, its public JWK Set passed to the server there. */
  let jwtClientKey;

  return {
    name,
    store,

    /** The server pinned to `cpu` (when not null); ready once it answers its discovery document. */
    async start({ port, cpu, logFile = join(tmpdir(), `${name}-bench-${port}.log`) }) {
      const baseUrl = `http://127.0.0.1:${port}`;
      jwtClientKey = assertionKey();
      const env = { PORT: String(port), NODE_ENV: 'production', BENCH_CLIENT_JWKS: JSON.stringify(jwtClientKey.jwks), OIDC_PROVIDER_STORE: store };
      const prefix = store === 'redis' ? randomPrefix() : undefined;
      if (prefix) Object.assign(env, { REDIS_URL: redisUrl, OIDC_PROVIDER_REDIS_PREFIX: prefix });
      const cleanUp = async () => {
        if (prefix) await deleteKeys({ url: redisUrl, prefix });
      };
      let server;
      try {
        server = await startServer({
          name,
          command: process.execPath,
          args: ['bench/servers/oidc-provider-server.mjs'],
          env,
          cpu,
          // The server prints `ready` once listening; answering a request through the provider is the
          // stronger check, and the one the other targets use.
          readyUrl: `${baseUrl}/.well-known/openid-configuration`,
          logFile,
        });
      } catch (error) {
        await cleanUp().catch(() => {});
        throw error;
      }
      return {
        ...server,
        baseUrl,
        async stop() {
          try {
            await server.stop();
          } finally {
            await cleanUp();
          }
        },
      };
    },

    /**
     * One signed-in session with consent given (its cookie and a user access token), another for the
     * RS256 client (its cookie), and `refresh` (or `workers`) refresh tokens, each from a browser
     * session of its own: oidc-provider revokes a whole grant when a rotated refresh token is reused,
     * so tokens sharing one grant would not be independent.
     */
    async prepare(baseUrl, { refresh, workers } = {}) {
      const count = refresh ?? workers ?? 64;
      const main = await signInAndConsent(baseUrl);
      const openId = await signInAndConsent(baseUrl, RS256_CLIENT_ID);
      const refreshTokens = [];
      for (let i = 0; i < count; i++) {
        const { tokens } = await signInAndConsent(baseUrl);
        if (!tokens.refresh_token) throw new Error('the code exchange returned no refresh token');
        refreshTokens.push(tokens.refresh_token);
      }
      // dpopRead: an access token bound to an ES256 key, from an authorization in the main session
      // (consent remembered) redeemed with a DPoP proof.
      const dpop = dpopKey();
      const { verifier, challenge } = pkcePair();
      const state = randomBytes(8).toString('hex');
      const authorized = await request(baseUrl, { path: authorizePath({ scope: FLOW_SCOPE, challenge, state }), headers: { cookie: sessionCookie(main.jar) } });
      const dpopTokens = await exchangeCode(baseUrl, codeFrom(authorized, state, 'authorize (DPoP)'), verifier, CLIENT_ID, dpop);
      if (dpopTokens.token_type?.toLowerCase() !== 'dpop') throw new Error(`code exchange with a DPoP proof: token_type ${dpopTokens.token_type}, expected DPoP`);
      // privateKeyJwtClientCredentials: the assertions' aud is the issuer as discovery states it.
      const { issuer } = JSON.parse(expectStatus(await request(baseUrl, { path: '/.well-known/openid-configuration' }), 200, 'discovery').body);
      return {
        baseUrl,
        cookie: sessionCookie(main.jar),
        openIdCookie: sessionCookie(openId.jar),
        accessToken: main.tokens.access_token,
        refreshTokens,
        dpop: { key: dpop, accessToken: dpopTokens.access_token },
        jwtClient: { clientId: JWT_CLIENT_ID, audience: issuer, key: jwtClientKey },
      };
    },

    scenarios: {
      read: (ctx) => ({ method: 'GET', path: '/me', headers: { authorization: `Bearer ${ctx.accessToken}` } }),

      /** read with the DPoP-bound token: `Authorization: DPoP`, and a proof per request (bench/lib/dpop.mjs). */
      dpopRead: (ctx) => ({ path: '/me', accessToken: ctx.dpop.accessToken, key: ctx.dpop.key }),

      clientCredentials: () => ({
        method: 'POST',
        path: '/token',
        headers: { authorization: AUTHORIZATION, 'content-type': FORM },
        body: `grant_type=client_credentials&scope=${encodeURIComponent(API_SCOPE)}`,
      }),

      /** clientCredentials for the private_key_jwt client: a fresh assertion per request (bench/lib/client-assertion.mjs). */
      privateKeyJwtClientCredentials: (ctx) => ({ path: '/token', form: `grant_type=client_credentials&scope=${encodeURIComponent(API_SCOPE)}`, ...ctx.jwtClient }),

      introspect: (ctx) => ({
        method: 'POST',
        path: '/token/introspection',
        headers: { authorization: AUTHORIZATION, 'content-type': FORM },
        body: `token=${ctx.accessToken}`,
      }),

      /** One refresh with this worker's token; the rotated token replaces it. */
      refresh: (ctx, worker) => {
        if (worker >= ctx.refreshTokens.length) throw new Error(`only ${ctx.refreshTokens.length} refresh tokens for worker ${worker}`);
        return async () => {
          const response = await request(ctx.baseUrl, tokenRequest({ grant_type: 'refresh_token', refresh_token: ctx.refreshTokens[worker] }));
          const { refresh_token: rotated } = JSON.parse(expectStatus(response, 200, 'refresh').body);
          if (!rotated || rotated === ctx.refreshTokens[worker]) throw new Error('refresh: the token was not rotated');
          ctx.refreshTokens[worker] = rotated;
        };
      },

      /** Authorize in the signed-in session (no interaction: consent is remembered) → code → tokens → userinfo. */
      flow: (ctx) => async () => {
        const { verifier, challenge } = pkcePair();
        const state = randomBytes(8).toString('hex');
        const authorized = await request(ctx.baseUrl, { path: authorizePath({ scope: FLOW_SCOPE, challenge, state }), headers: { cookie: ctx.cookie } });
        const tokens = await exchangeCode(ctx.baseUrl, codeFrom(authorized, state, 'authorize'), verifier);
        const userinfo = await request(ctx.baseUrl, { path: '/me', headers: { authorization: `Bearer ${tokens.access_token}` } });
        expectStatus(userinfo, 200, 'userinfo');
      },

      /** As flow, with a nonce, for the RS256 client: every token response must carry its ID token. */
      openIdFlow: (ctx) => async () => {
        const { verifier, challenge } = pkcePair();
        const state = randomBytes(8).toString('hex');
        const nonce = randomBytes(8).toString('hex');
        const authorized = await request(ctx.baseUrl, { path: authorizePath({ scope: FLOW_SCOPE, challenge, state, nonce, clientId: RS256_CLIENT_ID }), headers: { cookie: ctx.openIdCookie } });
        const tokens = await exchangeCode(ctx.baseUrl, codeFrom(authorized, state, 'authorize'), verifier, RS256_CLIENT_ID);
        expectIdToken(tokens, { alg: 'RS256', nonce });
        const userinfo = await request(ctx.baseUrl, { path: '/me', headers: { authorization: `Bearer ${tokens.access_token}` } });
        expectStatus(userinfo, 200, 'userinfo');
      },
    },
  };
}

/** The in-memory peer, as before. */
export default oidcProvider();
