/**
 * OpenID Connect on three instances behind nginx: a stock relying party (openid-client) whose every
 * request may land on another instance, back-channel logout delivered once although every instance
 * polls the outbox, and signing keys rotated under load while relying parties verify every ID token
 * against the JWKS as they would (jose's createRemoteJWKSet). Run by scripts/test-cluster.mjs.
 *
 * This file's cluster runs with settings of its own (Cluster.start's second argument), not the
 * other files': the receiver listens on loopback, which outgoing requests refuse unless allowed,
 * and the key schedule is shortened from an hour to seconds so that a rotation completes within a test.
 */
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify, type JWTVerifyGetKey } from 'jose';
import * as oidc from 'openid-client';
import { Browser, isLoginPage } from '../helpers/browser.js';
import { authorizeAsUser } from '../helpers/oauth-flow.js';
import type { TestUser } from '../helpers/test-app.js';
import { Cluster, type ClusterClient, withClusterLogs } from './support/cluster.js';
import { TOPOLOGY } from './support/settings.js';
import { LogoutReceiver } from '../helpers/logout-receiver.js';
import { performance } from 'node:perf_hooks';
import type { Instance } from './support/instance.js';
import { requestTo } from './support/target.js';

const REDIRECT_URI = 'https://app.example/callback';
const SIGNED_OUT = 'https://app.example/signed-out';
const LEAD_SECONDS = 4;
const RELOAD_SECONDS = 1;
const POLL_MS = 100;
const SETTINGS = {
  // The receiver is an http server on 127.0.0.1.
  OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true',
  // Every instance polls the outbox ten times a second: many chances for two of them to take the same notification.
  BACKCHANNEL_LOGOUT_POLL_MS: String(POLL_MS),
  // A new key is published 4 s before it signs; each instance reloads the published keys every second; the JWKS max-age follows (1 s).
  SIGNING_KEY_PUBLISH_LEAD_SECONDS: String(LEAD_SECONDS),
  SIGNING_KEY_RELOAD_SECONDS: String(RELOAD_SECONDS),
};

interface Hop {
  step: string;
  upstream: string | null;
  sentAt: number;
}

type Tokens = oidc.TokenEndpointResponse & oidc.TokenEndpointResponseHelpers;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe(`OpenID Connect on three instances behind ${TOPOLOGY.label}`, () => {
  let cluster: Cluster;
  let app: ClusterClient;
  let metadata: oidc.ServerMetadata;
  const receiver = new LogoutReceiver();
  const alice: TestUser = { username: 'alice', password: 'correct horse battery staple' };
  let aliceId: string;

  const withLogs = withClusterLogs(() => cluster);
  const instanceName = (upstream: string | null) => cluster.instanceOf(upstream)?.name ?? `unknown(${upstream})`;
  const instancesServing = (hops: { upstream: string | null }[]) => new Set(hops.map((hop) => instanceName(hop.upstream)));
  const allInstances = () => new Set(cluster.instances.map((i) => i.name));

  /** fetch for openid-client that records which instance answered each request the application made. */
  const recordingFetch = (hops: Hop[]): oidc.CustomFetch => async (url, options) => {
    const sentAt = Date.now();
    const response = await fetch(url, options as RequestInit);
    hops.push({ step: `${options.method} ${new URL(url).pathname}`, upstream: response.headers.get('x-upstream'), sentAt });
    return response;
  };

  /** The application as configured from discovery: openid-client with its own (recording) fetch. */
  const application = (hops: Hop[]): oidc.Configuration => {
    const config = new oidc.Configuration(metadata, app.clientId, undefined, oidc.ClientSecretBasic(app.clientSecret));
    config[oidc.customFetch] = recordingFetch(hops);
    return config;
  };

  /** A sign-in by the application: code flow with PKCE, state and nonce; openid-client checks the ID token's claims. */
  async function signIn(config: oidc.Configuration, browser: Browser, user: TestUser, scope = 'openid'): Promise<Tokens> {
    const verifier = oidc.randomPKCECodeVerifier();
    const nonce = oidc.randomNonce();
    const state = oidc.randomState();
    const url = oidc.buildAuthorizationUrl(config, { redirect_uri: REDIRECT_URI, scope, nonce, state, code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' });
    const page = await authorizeAsUser(browser, user, url.href);
    if ((page.status !== 302 && page.status !== 303) || !page.location) throw new Error(`Expected a redirect to the application, got ${page.status}:\n${page.body}`);
    return oidc.authorizationCodeGrant(config, new URL(page.location), { pkceCodeVerifier: verifier, expectedNonce: nonce, expectedState: state, idTokenExpected: true });
  }

  const jwksUri = () => new URL(metadata.jwks_uri!);
  const rs256Kids = (jwks: { keys: { alg?: string; kid?: string }[] }) => jwks.keys.filter((key) => key.alg === 'RS256').map((key) => key.kid);

  beforeAll(async () => {
    await receiver.start();
    cluster = await Cluster.start(3, SETTINGS);
    aliceId = cluster.createUser(alice.username, alice.password, '--email', 'alice@example.com', '--name', 'Alice Liddell', '--given-name', 'Alice', '--family-name', 'Liddell');
    app = cluster.createClient('OpenID application', ['authorization_code', 'refresh_token'], 'notes:read', REDIRECT_URI, [
      '--post-logout-redirect-uri', SIGNED_OUT,
      '--backchannel-logout-uri', receiver.url,
    ]);
    metadata = (await oidc.discovery(new URL(cluster.issuer), app.clientId, undefined, oidc.ClientSecretBasic(app.clientSecret))).serverMetadata();
  }, 120_000);

  afterAll(async () => {
    await cluster?.stop();
    await receiver.stop();
  });

  it('signs a person in and out with openid-client, each request on any instance, and tells the application once by back channel', withLogs(async () => {
    const hops: Hop[] = [];
    const hop = <T extends { headers: Headers }>(step: string, page: T): T => (hops.push({ step, upstream: page.headers.get('x-upstream'), sentAt: Date.now() }), page);
    // Discovery and every later request through the stock library; it also checks each ID token's signature against jwks_uri.
    const config = await oidc.discovery(new URL(cluster.issuer), app.clientId, undefined, oidc.ClientSecretBasic(app.clientSecret), {
      execute: [oidc.enableNonRepudiationChecks],
      [oidc.customFetch]: recordingFetch(hops),
    });
    expect(config.serverMetadata()).toMatchObject({ issuer: cluster.issuer, end_session_endpoint: `${cluster.issuer}/session/end`, backchannel_logout_supported: true, backchannel_logout_session_supported: true });

    const browser = new Browser(cluster.baseUrl);
    const verifier = oidc.randomPKCECodeVerifier();
    const nonce = oidc.randomNonce();
    const state = oidc.randomState();
    const url = oidc.buildAuthorizationUrl(config, { redirect_uri: REDIRECT_URI, scope: 'openid profile email', nonce, state, code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' });
    const loginPage = hop('authorize', await browser.get(url.href));
    expect(isLoginPage(loginPage)).toBe(true);
    const loggedIn = hop('login', await browser.submit(loginPage, '/login', { username: alice.username, password: alice.password }));
    expect(loggedIn.status).toBe(303);
    const consentPage = hop('consent page', await browser.get(loggedIn.location!));
    expect(consentPage.body).toContain('action="/consent"');
    const allowed = hop('consent', await browser.submit(consentPage, '/consent', { decision: 'allow' }));
    expect(allowed.location).toMatch(/^https:\/\/app\.example\/callback\?/);

    const tokens = await oidc.authorizationCodeGrant(config, new URL(allowed.location!), { pkceCodeVerifier: verifier, expectedNonce: nonce, expectedState: state, idTokenExpected: true });
    const claims = tokens.claims()!;
    expect(claims).toMatchObject({ iss: cluster.issuer, aud: app.clientId, sub: aliceId, nonce, amr: ['pwd'] });
    expect(claims.sid).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // And as a relying party with only jose would check it, against the published keys.
    const jwks = createRemoteJWKSet(jwksUri());
    await expect(jwtVerify(tokens.id_token!, jwks, { issuer: cluster.issuer, audience: app.clientId })).resolves.toBeDefined();

    const info = await oidc.fetchUserInfo(config, tokens.access_token, claims.sub);
    expect(info).toEqual({ sub: aliceId, name: 'Alice Liddell', given_name: 'Alice', family_name: 'Liddell', preferred_username: alice.username, updated_at: expect.any(Number), email: 'alice@example.com', email_verified: false });

    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
    const again = refreshed.claims()!;
    expect(refreshed.id_token).toEqual(expect.any(String));
    expect(refreshed.id_token).not.toBe(tokens.id_token);
    expect(again).toMatchObject({ sub: claims.sub, aud: app.clientId, sid: claims.sid, auth_time: claims.auth_time });
    expect(again.nonce).toBeUndefined();

    const endSession = oidc.buildEndSessionUrl(config, { id_token_hint: refreshed.id_token!, post_logout_redirect_uri: SIGNED_OUT, state: 'bye' });
    const signedOut = hop('end session', await browser.get(endSession.href));
    expect([signedOut.status, signedOut.location]).toEqual([303, `${SIGNED_OUT}?state=bye`]);
    // Signed out on every instance: the session was in the database, not in the one that ended it.
    const checks = [];
    for (let i = 0; i < 3; i++) checks.push(hop('login page after', await browser.get('/login')));
    expect(checks.map(isLoginPage)).toEqual([true, true, true]);
    expect(instancesServing(checks.map((page) => ({ upstream: page.headers.get('x-upstream') })))).toEqual(allInstances());

    expect(instancesServing(hops)).toEqual(allInstances());
    console.log(`Sign-in through openid-client, request by request:\n${hops.map((h) => `  ${h.step.padEnd(24)} ${instanceName(h.upstream)}`).join('\n')}`);

    // Back-Channel Logout: one logout token for the session, though three instances poll the outbox every 100 ms.
    const sid = String(claims.sid);
    await receiver.waitFor([sid]);
    await sleep(30 * POLL_MS);
    const received = receiver.forSession(sid);
    expect(received).toHaveLength(1);
    const { payload, protectedHeader } = await jwtVerify(received[0], jwks, { issuer: cluster.issuer, audience: app.clientId, typ: 'logout+jwt' });
    expect(payload).toMatchObject({ sub: aliceId, sid, events: { 'http://schemas.openid.net/event/backchannel-logout': {} } });
    expect(payload.nonce).toBeUndefined();
    expect(protectedHeader.alg).toBe('RS256');
    // Claimed once: one attempt, recorded as delivered.
    expect(await cluster.query('SELECT status, attempts, last_error FROM logout_deliveries WHERE sid = $1', [sid])).toEqual([{ status: 'delivered', attempts: 1, last_error: null }]);
  }));

  it('delivers exactly one logout token per session when many sessions end at once and every instance polls', withLogs(async () => {
    const bob: TestUser = { username: 'bob', password: 'correct horse battery staple' };
    cluster.createUser(bob.username, bob.password);
    const config = application([]);
    const sessions = 12;
    // One after the other: concurrent sign-ins from one address can be refused (429) by the login throttle.
    const sids: string[] = [];
    for (let i = 0; i < sessions; i++) sids.push(String((await signIn(config, new Browser(cluster.baseUrl), bob)).claims()!.sid));
    expect(new Set(sids).size).toBe(sessions);
    const before = receiver.received.length;

    // One transaction ends every session and writes twelve notifications, all due at once.
    expect(cluster.cli('users:sign-out', '--username', bob.username)).toEqual({ username: bob.username, sessions_ended: sessions });
    await receiver.waitFor(sids);
    await sleep(30 * POLL_MS);
    const counts = Object.fromEntries(sids.map((sid) => [sid, receiver.forSession(sid).length]));
    expect(counts).toEqual(Object.fromEntries(sids.map((sid) => [sid, 1])));
    expect(receiver.received.length - before).toBe(sessions);
    const rows = await cluster.query<{ status: string; attempts: number }>('SELECT status, attempts FROM logout_deliveries WHERE sid = ANY($1)', [sids]);
    expect(rows).toHaveLength(sessions);
    expect(rows.filter((row) => row.status !== 'delivered' || row.attempts !== 1)).toEqual([]);
  }));

  it('deprovisions a person through SCIM (PATCH active "False", as Entra ID sends it): their access token, kept by all three instances, is refused on each within the notification, their refresh token and sign-in are refused, and the application gets the logout token', withLogs(async () => {
    const dora: TestUser = { username: 'dora', password: 'correct horse battery staple' };
    const doraId = cluster.createUser(dora.username, dora.password);
    const config = application([]);
    const tokens = await signIn(config, new Browser(cluster.baseUrl), dora, 'openid notes:read');
    const sid = String(tokens.claims()!.sid);
    const readsOn = async (instance: Instance) => (await requestTo(cluster, instance, 'GET', '/api/v1/notes?limit=1', { authorization: `Bearer ${tokens.access_token}` })).status;
    // Used twice on each instance, so each keeps it (shared-state.cluster-spec.ts shows a kept token is not re-read).
    for (let n = 0; n < 2; n++) expect(await Promise.all(cluster.instances.map(readsOn))).toEqual([200, 200, 200]);

    // The directory's connector: a client_credentials client registered for the scim scope (issue 46).
    const connector = cluster.createClient('Directory connector', ['client_credentials'], 'scim');
    const grant = await fetch(`${cluster.baseUrl}/token`, { method: 'POST', headers: { authorization: `Basic ${Buffer.from(`${connector.clientId}:${connector.clientSecret}`).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=client_credentials&scope=scim' });
    const { access_token: scimToken } = (await grant.json()) as { access_token: string };
    const patch = await fetch(`${cluster.baseUrl}/scim/v2/Users/${doraId}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${scimToken}`, 'content-type': 'application/scim+json' },
      body: JSON.stringify({ schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: [{ op: 'Replace', path: 'active', value: 'False' }] }),
    });
    const since = performance.now();
    expect(patch.status).toBe(200);
    expect(((await patch.json()) as { active: boolean }).active).toBe(false);
    const delivery = await Promise.all(cluster.instances.map(async (instance) => {
      while (performance.now() - since < 2000) if ((await readsOn(instance)) === 401) return Math.round(performance.now() - since);
      return `still accepted after 2000 ms`;
    }));
    console.log(`${TOPOLOGY.name}: person deactivated through SCIM, their access token refused after ${delivery.map((ms, n) => `${ms} ms on ${cluster.instances[n].name}`).join(', ')}`);
    expect(delivery.every((ms) => typeof ms === 'number')).toBe(true);
    await expect(oidc.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    await receiver.waitFor([sid]);
    const { payload } = await jwtVerify(receiver.forSession(sid)[0], createRemoteJWKSet(jwksUri()), { issuer: cluster.issuer, audience: app.clientId, typ: 'logout+jwt' });
    expect(payload).toMatchObject({ sub: doraId, sid });
    // Refused as a wrong password is, on every instance; reactivated, she signs in again.
    const stranger = new Browser(cluster.baseUrl);
    const refusedSignIn = await stranger.submit(await stranger.get('/login'), '/login', { username: dora.username, password: dora.password });
    expect(refusedSignIn.status).toBe(401);
    cluster.cli('users:reactivate', '--username', dora.username);
    await expect(signIn(config, new Browser(cluster.baseUrl), dora, 'openid')).resolves.toBeDefined();
  }));

  it('rotates the RS256 key under a sign-in load with no failed validation, and every instance signs with the new key once its lead has passed', withLogs(async () => {
    const carol: TestUser = { username: 'carol', password: 'correct horse battery staple' };
    cluster.createUser(carol.username, carol.password);
    const workers = 6;

    const response = await fetch(jwksUri());
    const maxAge = Number(/max-age=(\d+)/.exec(response.headers.get('cache-control') ?? '')?.[1]);
    // Derived from the lead and the reload: a cached JWKS plus an instance's reload stay within the lead.
    expect(maxAge).toBe(Math.floor(LEAD_SECONDS / 2) - RELOAD_SECONDS);
    expect(maxAge + RELOAD_SECONDS).toBeLessThan(LEAD_SECONDS);
    const [oldKid] = rs256Kids((await response.json()) as { keys: { alg?: string; kid?: string }[] });

    // Two relying parties, each verifying every ID token as it arrives. One caches the JWKS as its
    // Cache-Control allows and keeps jose's 30 s cooldown, so it never gets to refetch for an unknown
    // kid here: it passes only if every JWKS it fetched already held the key that signs. The other
    // keeps jose's 10-minute cache (fetched before the rotation) and refetches on an unknown kid,
    // its cooldown scaled down with the lead (1 s; jose's default is 30 s against a lead of an hour).
    const relyingParties: [string, JWTVerifyGetKey][] = [
      ['honours max-age', createRemoteJWKSet(jwksUri(), { cacheMaxAge: maxAge * 1000 })],
      ['refetches on unknown kid', createRemoteJWKSet(jwksUri(), { cooldownDuration: 1000 })],
    ];

    // Each worker's browser signs in once first, one after the other (concurrent sign-ins from one
    // address can be refused by the login throttle); in the load, a sign-in is authorize and token.
    const browsers: Browser[] = [];
    for (let id = 0; id < workers; id++) {
      browsers.push(new Browser(cluster.baseUrl));
      await signIn(application([]), browsers[id], carol);
    }

    interface Issued { kid: string; instance: string; sentAt: number; receivedAt: number }
    const issued: Issued[] = [];
    const failures: string[] = [];
    let rotated: { kid: string; activatesAt: number } | undefined;
    let rotationError: unknown;
    const start = Date.now();
    const hardDeadline = start + 60_000;
    const done = () => Date.now() > hardDeadline || rotationError !== undefined || (rotated !== undefined && Date.now() > rotated.activatesAt + 3000);

    const rotation = sleep(1000)
      .then(() => cluster.cliInBackground('keys:rotate', '--alg', 'RS256'))
      .then((keys) => {
        const [key] = keys as { kid: string; alg: string; state: string; activates_at: string }[];
        rotated = { kid: key.kid, activatesAt: Date.parse(key.activates_at) };
      }, (error: unknown) => (rotationError = error));

    const worker = async (id: number) => {
      const hops: Hop[] = [];
      const config = application(hops);
      const browser = browsers[id];
      for (let n = 0; !done(); n++) {
        let tokens: Tokens;
        try {
          tokens = await signIn(config, browser, carol);
        } catch (error) {
          failures.push(`worker ${id} sign-in ${n}: ${(error as Error).message}`);
          continue;
        }
        const tokenHop = hops.findLast((h) => h.step === 'POST /token')!;
        const receivedAt = Date.now();
        const { kid } = decodeProtectedHeader(tokens.id_token!);
        issued.push({ kid: String(kid), instance: instanceName(tokenHop.upstream), sentAt: tokenHop.sentAt, receivedAt });
        for (const [name, keys] of relyingParties) {
          try {
            await jwtVerify(tokens.id_token!, keys, { issuer: cluster.issuer, audience: app.clientId });
          } catch (error) {
            failures.push(`${name}: token ${kid} from ${instanceName(tokenHop.upstream)} at +${receivedAt - start} ms: ${(error as Error).name} ${(error as Error).message}`);
          }
        }
      }
    };
    await Promise.all([rotation, ...Array.from({ length: workers }, (_, id) => worker(id))]);
    if (rotationError) throw rotationError;
    const { kid: newKid, activatesAt } = rotated!;

    const summary: Record<string, Record<string, number>> = {};
    for (const token of issued) {
      const period = token.receivedAt < activatesAt ? 'before activation' : token.sentAt >= activatesAt ? 'after activation' : 'across activation';
      const key = `${period}, ${token.kid === oldKid ? 'old' : token.kid === newKid ? 'new' : token.kid} key`;
      summary[key] = { ...summary[key], [token.instance]: (summary[key]?.[token.instance] ?? 0) + 1 };
    }
    console.log(`Sign-ins by ${workers} workers for ${Date.now() - start} ms, keys:rotate started at +1 s, new key signs from +${activatesAt - start} ms:\n${JSON.stringify({ issued: issued.length, failures: failures.length, summary }, null, 2)}`);

    expect(failures).toEqual([]);
    expect(newKid).not.toBe(oldKid);
    // Nothing signs with the new key before its activation; after it, every instance signs with it and nothing else.
    const before = issued.filter((t) => t.receivedAt < activatesAt);
    const after = issued.filter((t) => t.sentAt >= activatesAt);
    expect(before.filter((t) => t.kid !== oldKid)).toEqual([]);
    expect(after.filter((t) => t.kid !== newKid)).toEqual([]);
    expect(new Set(after.map((t) => t.instance))).toEqual(allInstances());
    expect(new Set(before.map((t) => t.instance))).toEqual(allInstances());

    // Every instance publishes both keys: the old one verifies what it signed until those tokens expire.
    const published = [];
    for (let i = 0; i < 3; i++) {
      const reply = await fetch(jwksUri());
      published.push({ instance: instanceName(reply.headers.get('x-upstream')), kids: rs256Kids((await reply.json()) as { keys: { alg?: string; kid?: string }[] }).sort() });
    }
    expect(new Set(published.map((p) => p.instance))).toEqual(allInstances());
    for (const each of published) expect(each.kids).toEqual([oldKid, newKid].sort());
  }));

  /** Sequential requests through nginx (round robin) until each instance answered one; the first answer of each, by instance. */
  async function firstAnswerOfEach<T>(request: () => Promise<{ upstream: string | null; value: T }>): Promise<Map<string, T>> {
    const first = new Map<string, T>();
    for (let i = 0; first.size < cluster.instances.length && i < 12; i++) {
      const { upstream, value } = await request();
      const name = instanceName(upstream);
      if (!first.has(name)) first.set(name, value);
    }
    return first;
  }

  // The key schedule's promise (SigningKeyRing: the keys are "reloaded every SIGNING_KEY_RELOAD_SECONDS
  // in the background", so a rotation "reaches every instance well within the publish lead", and a key
  // activates "by the clock, not by a reload") must hold on a quiet deployment too: a rotation at
  // night, the first sign-in in the morning. A JWKS answered without the key that signs is cached by
  // relying parties for its max-age. Two rotations, because the first JWKS or token request an
  // instance answers makes it reload: the JWKS is looked at after one, the signing after the other.
  it('publishes a rotated key on every instance, and signs with it once its lead has passed, even where nothing was asked in between', withLogs(async () => {
    const dave: TestUser = { username: 'dave', password: 'correct horse battery staple' };
    cluster.createUser(dave.username, dave.password);
    // Dave's session and consent exist before, so that a sign-in afterwards is two requests: authorize and token.
    const hops: Hop[] = [];
    const config = application(hops);
    const browser = new Browser(cluster.baseUrl);
    await signIn(config, browser, dave);
    const idle = (LEAD_SECONDS + 2 * RELOAD_SECONDS + 1) * 1000;

    // The JWKS: every instance's first answer after a rotation (quiet for longer than lead + reload) holds the new key.
    const [forJwks] = cluster.cli('keys:rotate', '--alg', 'RS256') as { kid: string }[];
    await sleep(idle);
    const jwks = await firstAnswerOfEach(async () => {
      const reply = await fetch(jwksUri());
      return { upstream: reply.headers.get('x-upstream'), value: rs256Kids((await reply.json()) as { keys: { alg?: string; kid?: string }[] }).includes(forJwks.kid) ? 'holds the new key' : 'lacks the new key' };
    });

    // Signing: every instance's first ID token after the next rotation's activation carries the new key.
    const [forSigning] = cluster.cli('keys:rotate', '--alg', 'RS256') as { kid: string }[];
    await sleep(idle);
    const signed = await firstAnswerOfEach(async () => {
      const tokens = await signIn(config, browser, dave);
      const { kid } = decodeProtectedHeader(tokens.id_token!);
      return { upstream: hops.findLast((h) => h.step === 'POST /token')!.upstream, value: kid === forSigning.kid ? 'signed with the new key' : kid === forJwks.kid ? 'signed with the replaced key' : `signed with ${kid}` };
    });
    const everywhere = (outcome: string) => Object.fromEntries(cluster.instances.map((i) => [i.name, outcome]));
    expect({ jwks: Object.fromEntries(jwks), signing: Object.fromEntries(signed) }).toEqual({ jwks: everywhere('holds the new key'), signing: everywhere('signed with the new key') });
  }));
  it('pushes an authorization request on one instance (RFC 9126, openid-client) and completes it on the others; a request_uri yields one code across instances', withLogs(async () => {
    const hops: Hop[] = [];
    const config = application(hops);
    const browser = new Browser(cluster.baseUrl);
    const verifier = oidc.randomPKCECodeVerifier();
    const nonce = oidc.randomNonce();
    const state = oidc.randomState();
    // The stock library pushes the request and builds the URL with only client_id and request_uri.
    const url = await oidc.buildAuthorizationUrlWithPAR(config, { redirect_uri: REDIRECT_URI, scope: 'openid', nonce, state, code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' });
    expect([...url.searchParams.keys()].sort()).toEqual(['client_id', 'request_uri']);
    const page = await authorizeAsUser(browser, alice, url.href);
    expect(page.location).toMatch(/^https:\/\/app\.example\/callback\?/);
    const tokens = await oidc.authorizationCodeGrant(config, new URL(page.location!), { pkceCodeVerifier: verifier, expectedNonce: nonce, expectedState: state, idTokenExpected: true });
    expect(tokens.claims()).toMatchObject({ iss: cluster.issuer, aud: app.clientId, sub: aliceId, nonce });
    expect(hops.map((h) => h.step)).toEqual(['POST /par', 'POST /token']);

    // Signed in with consent given, every GET of a request_uri goes straight to a code: twelve at once through nginx, one code.
    const raced = await oidc.buildAuthorizationUrlWithPAR(config, { redirect_uri: REDIRECT_URI, scope: 'openid', nonce: oidc.randomNonce(), state: oidc.randomState(), code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()), code_challenge_method: 'S256' });
    const pages = await Promise.all(Array.from({ length: 12 }, () => browser.get(raced.href)));
    const codes = pages.filter((p) => p.location !== undefined && new URL(p.location).searchParams.has('code'));
    expect(codes).toHaveLength(1);
    expect(pages.filter((p) => p.status === 400 && p.body.includes('invalid_request_uri'))).toHaveLength(11);
    expect(instancesServing(pages.map((p) => ({ upstream: p.headers.get('x-upstream') })))).toEqual(allInstances());
  }));
});
