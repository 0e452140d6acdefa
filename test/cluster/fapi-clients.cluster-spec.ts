/**
 * private_key_jwt (RFC 7523) and resource indicators with JWT access tokens (RFC 8707, RFC 9068)
 * on three instances behind nginx, on PostgreSQL: oauth4webapi, unmodified, authenticates with
 * client assertions through the load balancer whichever instance answers; an assertion is accepted
 * once across the instances (one INSERT into jti_uses, also when they race); a client serving
 * its keys at a jwks_uri is known to every instance (each fetches the set once, then caches it);
 * and a JWT access token issued by one instance verifies offline against another instance's JWKS,
 * is refused by every instance's data API (it is for another resource) and is introspected with its
 * aud by every instance. Run by scripts/test-cluster.mjs; this file never stops PostgreSQL.
 *
 * Requests meant for one instance in particular go to its own port as nginx sends them (plain
 * http from loopback, which TRUST_PROXY trusts, with the X-Forwarded-* headers of
 * deploy/nginx-proxy.conf): support/target.ts, which test/cluster/dpop.cluster-spec.ts uses too.
 */
import { createLocalJWKSet, exportJWK, generateKeyPair, jwtVerify, SignJWT, type CryptoKey, type JSONWebKeySet, type JWK } from 'jose';
import { createHash, randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as oauth from 'oauth4webapi';
import { basicAuth } from '../helpers/oauth-flow.js';
import { Cluster, type ClusterClient, withClusterLogs } from './support/cluster.js';
import { TOPOLOGY } from './support/settings.js';
import { type Hop, recordingHops, requestTo, type Target, tally, upstreamName } from './support/target.js';

const NOTES = '/api/v1/notes';
const ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
/** A resource server registered for RFC 9068 JWT access tokens. */
const LEDGER = 'https://ledger.example.com/v2';
/** The instances' own settings: the jwks_uri server listens on loopback, which outgoing requests refuse unless allowed. */
const SETTINGS = { OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true' };

interface Answer {
  status: number;
  body: Record<string, unknown>;
  /** The instance that answered (the one addressed, or the one the balancer names in X-Upstream). */
  servedBy: string;
}

/** A private_key_jwt client as it holds itself: its id, its private key and the kid it registered. */
interface KeyClient {
  clientId: string;
  privateKey: CryptoKey;
  kid: string;
  client: oauth.Client;
  auth: oauth.ClientAuth;
}

/** A key pair whose public half is registered (inline or at the jwks_uri) under `kid`. */
async function newClientKey(alg: 'ES256' | 'EdDSA'): Promise<{ privateKey: CryptoKey; publicJwk: JWK }> {
  const { privateKey, publicKey } = await generateKeyPair(alg);
  const publicJwk: JWK = { ...(await exportJWK(publicKey)), kid: `key-${randomUUID()}`, alg, use: 'sig' };
  return { privateKey, publicJwk };
}

describe(`private_key_jwt, jwks_uri and JWT access tokens on three instances behind ${TOPOLOGY.label}`, () => {
  let cluster: Cluster;
  let as: oauth.AuthorizationServer;
  let inline: KeyClient;
  let introspector: ClusterClient;
  let jwksServer: Server;
  /** What the jwks_uri server serves, and how often the instances fetched it. */
  let served: { keys: JWK[] } = { keys: [] };
  let jwksFetches = 0;
  const hops: Hop[] = [];

  const withLogs = withClusterLogs(() => cluster);
  const [a, b, c] = [0, 1, 2].map((i) => () => cluster.instances[i]);
  const nameOf = (upstream: string | null) => upstreamName(cluster, upstream);

  /** oauth4webapi's options: every request it makes is recorded with the instance that answered. */
  const recording = recordingHops(hops);

  /** One request to `target` (an instance on its own port, or the balancer: support/target.ts). */
  async function request(target: Target, method: string, path: string, headers: Record<string, string> = {}, form?: Record<string, string>): Promise<Answer> {
    const answer = await requestTo(cluster, target, method, path, headers, form);
    return { status: answer.status, body: answer.body, servedBy: answer.servedBy };
  }

  /** A hand-signed client assertion (RFC 7523 §3): iss and sub the client_id, aud the issuer, exp in 60 s, a jti. */
  function assertion(client: KeyClient, jti = randomUUID()): Promise<string> {
    return new SignJWT({ jti })
      .setProtectedHeader({ alg: 'ES256', kid: client.kid })
      .setIssuer(client.clientId)
      .setSubject(client.clientId)
      .setAudience(cluster.issuer)
      .setIssuedAt()
      .setExpirationTime('60s')
      .sign(client.privateKey);
  }

  /** client_credentials at `target`, authenticated with `clientAssertion`. */
  function tokenWithAssertion(target: Target, client: KeyClient, clientAssertion: string): Promise<Answer> {
    return request(target, 'POST', '/token', {}, {
      grant_type: 'client_credentials',
      scope: 'notes:read',
      client_id: client.clientId,
      client_assertion_type: ASSERTION_TYPE,
      client_assertion: clientAssertion,
    });
  }

  /** Registers a private_key_jwt client with the admin CLI: its keys inline (--jwks) or at a jwks_uri. */
  function registerKeyClient(name: string, keys: ['--jwks', string] | ['--jwks-uri', string], privateKey: CryptoKey, kid: string): KeyClient {
    const view = cluster.cli('clients:create', '--name', name, '--grant-type', 'client_credentials', '--scope', 'notes:read', '--auth-method', 'private_key_jwt', ...keys) as {
      client_id: string;
      client_secret?: string;
      token_endpoint_auth_method?: string;
    };
    expect(view.client_secret).toBeUndefined();
    return { clientId: view.client_id, privateKey, kid, client: { client_id: view.client_id }, auth: oauth.PrivateKeyJwt({ key: privateKey as never, kid }) };
  }

  /** client_credentials through nginx with oauth4webapi (a fresh assertion per request, signed by the library). */
  async function clientCredentials(client: KeyClient, parameters: Record<string, string> = { scope: 'notes:read' }): Promise<oauth.TokenEndpointResponse> {
    const response = await oauth.clientCredentialsGrantRequest(as, client.client, client.auth, new URLSearchParams(parameters), recording);
    return oauth.processClientCredentialsResponse(as, client.client, response);
  }

  /** The row an accepted assertion leaves in jti_uses (src/replay/jti-use.store.ts): SHA-256 of kind, signer and jti. */
  async function recordedUses(client: KeyClient, jti: string): Promise<number> {
    const useHash = createHash('sha256').update(`client_assertion\n${client.clientId}\n${jti}`).digest('hex');
    return Number((await cluster.query<{ n: string }>('SELECT count(*) AS n FROM jti_uses WHERE use_hash = $1', [useHash]))[0].n);
  }

  beforeAll(async () => {
    jwksServer = createServer((_request, response) => {
      jwksFetches++;
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(served));
    });
    await new Promise<void>((resolve) => jwksServer.listen(0, '127.0.0.1', resolve));
    cluster = await Cluster.start(3, SETTINGS);
    const key = await newClientKey('ES256');
    inline = registerKeyClient('Inline keys', ['--jwks', JSON.stringify({ keys: [key.publicJwk] })], key.privateKey, key.publicJwk.kid!);
    introspector = cluster.createClient('Resource server', ['client_credentials'], 'tokens:introspect');
    const issuer = new URL(cluster.issuer);
    as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...recording }));
  }, 120_000);

  afterAll(async () => {
    await cluster?.stop();
    await new Promise((resolve) => jwksServer?.close(resolve));
  });

  it(`discovery through ${TOPOLOGY.balancerName} offers private_key_jwt with asymmetric algorithms only`, () => {
    expect(as.issuer).toBe(cluster.issuer);
    expect(as.token_endpoint_auth_methods_supported).toContain('private_key_jwt');
    expect(as.token_endpoint_auth_signing_alg_values_supported).toEqual(expect.arrayContaining(['ES256', 'EdDSA']));
    expect(as.token_endpoint_auth_signing_alg_values_supported).not.toContain('HS256');
  });

  it(`oauth4webapi with PrivateKeyJwt, unmodified: client_credentials through ${TOPOLOGY.balancerName}, every instance answers 200`, withLogs(async () => {
    hops.length = 0;
    const tokens: oauth.TokenEndpointResponse[] = [];
    for (let i = 0; i < 6; i++) tokens.push(await clientCredentials(inline));
    expect(tokens.map((t) => [t.token_type, t.scope])).toEqual(Array.from({ length: 6 }, () => ['bearer', 'notes:read']));
    expect(new Set(tokens.map((t) => t.access_token)).size).toBe(6);
    expect(hops.map((h) => `${h.step} ${h.status}`)).toEqual(Array.from({ length: 6 }, () => 'POST /token 200'));
    expect(new Set(hops.map((h) => nameOf(h.upstream)))).toEqual(new Set(cluster.instances.map((i) => i.name)));
    // Each token is known to every instance.
    for (const [index, instance] of cluster.instances.entries()) {
      const introspected = await request(instance, 'POST', '/introspect', { authorization: basicAuth(introspector.clientId, introspector.clientSecret) }, { token: tokens[index].access_token });
      expect(introspected.body).toMatchObject({ active: true, client_id: inline.clientId, scope: 'notes:read' });
    }
  }));

  it('a client assertion accepted by one instance is refused by the others, and by itself, as already used', withLogs(async () => {
    const jti = randomUUID();
    const once = await assertion(inline, jti);
    expect(await tokenWithAssertion(a(), inline, once)).toMatchObject({ status: 200, body: { token_type: 'bearer', access_token: expect.any(String) }, servedBy: a().name });
    for (const instance of [b(), c(), a()]) {
      expect(await tokenWithAssertion(instance, inline, once)).toEqual({
        status: 401,
        body: { error: 'invalid_client', error_description: 'This client assertion was already used' },
        servedBy: instance.name,
      });
    }
    expect(await recordedUses(inline, jti)).toBe(1);
    // A fresh assertion of the same key is fine on B: it is the assertion that is spent, not the key.
    expect((await tokenWithAssertion(b(), inline, await assertion(inline))).status).toBe(200);
  }));

  it('one client assertion sent to all three instances at once, ten times over: exactly one request succeeds', withLogs(async () => {
    const jti = randomUUID();
    const once = await assertion(inline, jti);
    const answers = await Promise.all(Array.from({ length: 10 }, () => cluster.instances.map((instance) => tokenWithAssertion(instance, inline, once))).flat());
    expect(answers).toHaveLength(30);
    expect(tally(answers)).toEqual({ '200': 1, '401 invalid_client': 29 });
    expect(new Set(answers.filter((r) => r.status === 401).map((r) => r.body.error_description))).toEqual(new Set(['This client assertion was already used']));
    expect(new Set(answers.map((r) => r.servedBy)).size).toBe(3);
    expect(await recordedUses(inline, jti)).toBe(1);

    // Ten assertions raced at once, each sent to the three instances together: one winner per assertion.
    const assertions = await Promise.all(Array.from({ length: 10 }, () => assertion(inline)));
    const races = await Promise.all(assertions.map((each) => Promise.all(cluster.instances.map((instance) => tokenWithAssertion(instance, inline, each)))));
    expect(races.map(tally)).toEqual(Array.from({ length: 10 }, () => ({ '200': 1, '401 invalid_client': 2 })));
  }));

  it('a client whose keys are at a jwks_uri on loopback authenticates on every instance; each instance fetches the set once', withLogs(async () => {
    const key = await newClientKey('EdDSA');
    served = { keys: [key.publicJwk] };
    const uri = `http://127.0.0.1:${(jwksServer.address() as AddressInfo).port}/jwks.json`;
    const remote = registerKeyClient('Keys at a jwks_uri', ['--jwks-uri', uri], key.privateKey, key.publicJwk.kid!);
    const before = jwksFetches;

    // oauth4webapi through nginx: the round robin takes the requests to each instance in turn.
    hops.length = 0;
    for (let i = 0; i < 6; i++) expect(await clientCredentials(remote)).toMatchObject({ token_type: 'bearer', scope: 'notes:read' });
    expect(hops.map((h) => h.status)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(new Set(hops.map((h) => nameOf(h.upstream)))).toEqual(new Set(cluster.instances.map((i) => i.name)));

    // And on each instance addressed directly, with an assertion signed by hand (EdDSA).
    for (const instance of cluster.instances) {
      const signed = await new SignJWT({ jti: randomUUID() })
        .setProtectedHeader({ alg: 'EdDSA', kid: remote.kid })
        .setIssuer(remote.clientId)
        .setSubject(remote.clientId)
        .setAudience(cluster.issuer)
        .setIssuedAt()
        .setExpirationTime('60s')
        .sign(remote.privateKey);
      expect(await tokenWithAssertion(instance, remote, signed)).toMatchObject({ status: 200, servedBy: instance.name });
    }
    // The key set is cached per instance (CLIENT_JWKS_CACHE_SECONDS): one fetch by each.
    expect(jwksFetches - before).toBe(3);

    // A key the client did not register is refused on every instance.
    const stranger = await newClientKey('ES256');
    const forged = { ...remote, privateKey: stranger.privateKey, kid: remote.kid };
    for (const instance of cluster.instances) {
      const answer = await request(instance, 'POST', '/token', {}, {
        grant_type: 'client_credentials',
        client_assertion_type: ASSERTION_TYPE,
        client_assertion: await assertion(forged),
      });
      expect(answer).toMatchObject({ status: 401, body: { error: 'invalid_client' }, servedBy: instance.name });
    }
  }));

  it('resource indicators: a JWT access token for a registered resource verifies against another instance\'s JWKS, is refused by every data API and introspected with its aud everywhere', withLogs(async () => {
    // Introspected by the resource server's client: only it sees the ledger's tokens (RFC 7662 §2.2).
    expect(cluster.cli('resources:register', '--uri', LEDGER, '--name', 'Ledger', '--jwt-access-tokens', '--introspector', introspector.clientId)).toMatchObject({ uri: LEDGER, access_token_format: 'jwt', introspector: introspector.clientId });

    hops.length = 0;
    const tokens = await clientCredentials(inline, { scope: 'notes:read', resource: LEDGER });
    expect(tokens.token_type).toBe('bearer');
    expect(hops).toHaveLength(1);
    const issuedBy = cluster.instanceOf(hops[0].upstream);
    expect(issuedBy).toBeDefined();

    // The resource server verifies it offline, with the key set of an instance that did not issue it.
    const other = cluster.instances.find((instance) => instance !== issuedBy)!;
    const jwks = await request(other, 'GET', new URL(as.jwks_uri!).pathname);
    expect(jwks).toMatchObject({ status: 200, servedBy: other.name });
    const { payload, protectedHeader } = await jwtVerify(tokens.access_token, createLocalJWKSet(jwks.body as unknown as JSONWebKeySet), {
      issuer: cluster.issuer,
      audience: LEDGER,
      typ: 'at+jwt',
    });
    expect(protectedHeader).toMatchObject({ typ: 'at+jwt', kid: expect.any(String) });
    expect(payload).toMatchObject({ iss: cluster.issuer, aud: LEDGER, sub: inline.clientId, client_id: inline.clientId, scope: 'notes:read', jti: expect.any(String) });
    expect(payload.exp! - payload.iat!).toBe(tokens.expires_in);

    for (const instance of cluster.instances) {
      // Latchkey's own data API is not the ledger: every instance refuses the token.
      const read = await request(instance, 'GET', NOTES, { authorization: `Bearer ${tokens.access_token}` });
      expect(read).toMatchObject({ status: 401, body: { error: 'invalid_token', error_description: expect.stringContaining('another resource') }, servedBy: instance.name });
      // And every instance's introspection knows it, with its audience.
      const introspected = await request(instance, 'POST', '/introspect', { authorization: basicAuth(introspector.clientId, introspector.clientSecret) }, { token: tokens.access_token });
      expect(introspected).toMatchObject({ status: 200, body: { active: true, client_id: inline.clientId, scope: 'notes:read', aud: [LEDGER] }, servedBy: instance.name });
    }
  }));
});
