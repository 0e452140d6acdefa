/**
 * The FAPI-style client features with oauth4webapi, unmodified, against the server started as
 * `npm start` starts it (package.json's start script: its environment, Node options and
 * dist/src/main.js, in a child process), with users, clients and resource servers made by the
 * admin CLI: a private_key_jwt client that must push its requests (PAR) and receive DPoP-bound
 * tokens runs the code flow, reads the data API and refreshes; client_credentials with resource=
 * a resource server registered for JWT access tokens gets an RFC 9068 JWT that verifies against
 * the JWKS.
 */
import { calculateJwkThumbprint, createRemoteJWKSet, exportJWK, generateKeyPair, jwtVerify, type JWK } from 'jose';
import type { ChildProcess } from 'node:child_process';
import * as oauth from 'oauth4webapi';
import { runCli } from '../helpers/cli.js';
import { authorizationCodeGrant, clientCredentialsGrant, getNotes, pushedAuthorization, refreshTokenGrant } from '../helpers/dpop.js';
import { startAsNpmStart, stopServer } from '../helpers/npm-start.js';
import { authorizationUrl } from '../helpers/oauth4webapi.js';
import { signIn } from '../helpers/oauth-flow.js';
import { dropTestDatabase } from '../helpers/test-database.js';

const REDIRECT_URI = 'http://127.0.0.1:8080/callback';
const USER = { username: 'alice', password: 'correct horse battery staple' };
/** A resource server registered with --jwt-access-tokens. */
const LEDGER = 'https://ledger.example.com/v2';
const NOTES = '/api/v1/notes';
/** oauth4webapi refuses http:// unless told; the server listens on loopback. */
const INSECURE = { [oauth.allowInsecureRequests]: true } as const;

/** Runs the admin CLI; its JSON output. */
async function cli(...args: string[]): Promise<Record<string, unknown>> {
  const result = await runCli(args);
  if (result.code !== 0) throw new Error(`latchkey ${args[0]} failed (${result.code}): ${result.stderr}`);
  return JSON.parse(result.stdout) as Record<string, unknown>;
}

describe('private_key_jwt, PAR, DPoP and JWT access tokens against `npm start`', () => {
  let server: ChildProcess;
  let issuer: URL;
  let as: oauth.AuthorizationServer;
  /** The private_key_jwt client registered with --require-par and --dpop-bound. */
  let fapi: { client: oauth.Client; auth: oauth.ClientAuth };
  /** A client_secret_basic client for client_credentials. */
  let service: { client: oauth.Client; auth: oauth.ClientAuth };

  const verifyOffline = (token: string) =>
    jwtVerify(token, createRemoteJWKSet(new URL(as.jwks_uri!)), { issuer: as.issuer, audience: LEDGER, typ: 'at+jwt' });

  beforeAll(async () => {
    ({ server, issuer } = await startAsNpmStart());

    expect(await cli('users:create', '--username', USER.username, '--password', USER.password)).toMatchObject({ username: USER.username });
    const { privateKey, publicKey } = await generateKeyPair('ES256');
    const publicJwk: JWK = { ...(await exportJWK(publicKey)), kid: 'rp-key-1', alg: 'ES256', use: 'sig' };
    const created = await cli(
      'clients:create', '--name', 'FAPI app', '--redirect-uri', REDIRECT_URI, '--scope', 'notes:read',
      '--grant-type', 'authorization_code', '--grant-type', 'refresh_token', '--grant-type', 'client_credentials',
      '--auth-method', 'private_key_jwt', '--jwks', JSON.stringify({ keys: [publicJwk] }), '--require-par', '--dpop-bound',
    );
    expect(created.client_secret).toBeUndefined();
    fapi = { client: { client_id: String(created.client_id) }, auth: oauth.PrivateKeyJwt({ key: privateKey as never, kid: publicJwk.kid }) };
    const plain = await cli('clients:create', '--name', 'Service', '--scope', 'notes:read', '--grant-type', 'client_credentials');
    service = { client: { client_id: String(plain.client_id) }, auth: oauth.ClientSecretBasic(String(plain.client_secret)) };
    expect(await cli('resources:register', '--uri', LEDGER, '--name', 'Ledger', '--jwt-access-tokens')).toMatchObject({ uri: LEDGER, access_token_format: 'jwt' });

    as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oidc', ...INSECURE }));
  });
  afterAll(async () => {
    await stopServer(server);
    await dropTestDatabase();
  });

  it('discovery names PAR, private_key_jwt and DPoP', () => {
    expect(as.pushed_authorization_request_endpoint).toBe(`${issuer.origin}/par`);
    expect(as.token_endpoint_auth_methods_supported).toContain('private_key_jwt');
    expect(as.dpop_signing_alg_values_supported).toEqual(expect.arrayContaining(['ES256']));
  });

  it('private_key_jwt + PAR + DPoP: code flow, a DPoP-bound read of the data API, a refresh with DPoP', async () => {
    const dpop = oauth.DPoP(fapi.client, await oauth.generateKeyPair('ES256'));
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const parameters = { response_type: 'code', redirect_uri: REDIRECT_URI, scope: 'notes:read', state, code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' };

    // Without PAR the client is refused (--require-par): sent back to it with invalid_request.
    const direct = authorizationUrl(as, { client_id: fapi.client.client_id, ...parameters });
    const refused = await signIn(USER, direct);
    expect(refused.searchParams.get('error')).toBe('invalid_request');

    const pushed = await pushedAuthorization(as, fapi.client, fapi.auth, parameters, { DPoP: dpop, ...INSECURE });
    expect(pushed.request_uri).toMatch(/^urn:ietf:params:oauth:request_uri:/);
    const url = authorizationUrl(as, { client_id: fapi.client.client_id, request_uri: pushed.request_uri });
    const callback = oauth.validateAuthResponse(as, fapi.client, await signIn(USER, url), state);

    const tokens = await authorizationCodeGrant(as, fapi.client, fapi.auth, callback, REDIRECT_URI, verifier, { DPoP: dpop, ...INSECURE });
    expect(tokens).toMatchObject({ token_type: 'dpop', scope: 'notes:read', access_token: expect.any(String), refresh_token: expect.any(String) });

    const read = await getNotes(issuer, tokens.access_token, { DPoP: dpop, ...INSECURE });
    expect(read.status).toBe(200);
    // Without its key the token is worth nothing: as a bearer token it is refused.
    const asBearer = await fetch(new URL(NOTES, issuer), { headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect(asBearer.status).toBe(401);

    const refreshed = await refreshTokenGrant(as, fapi.client, fapi.auth, tokens.refresh_token!, { DPoP: dpop, ...INSECURE });
    expect(refreshed).toMatchObject({ token_type: 'dpop', access_token: expect.any(String) });
    expect(refreshed.access_token).not.toBe(tokens.access_token);
    const readAgain = await getNotes(issuer, refreshed.access_token, { DPoP: dpop, ...INSECURE });
    expect(readAgain.status).toBe(200);
  });

  it('client_credentials with resource=<a JWT resource server>: an RFC 9068 JWT that verifies against the JWKS', async () => {
    const response = await oauth.clientCredentialsGrantRequest(as, service.client, service.auth, new URLSearchParams({ scope: 'notes:read', resource: LEDGER }), INSECURE);
    const tokens = await oauth.processClientCredentialsResponse(as, service.client, response);
    expect(tokens.token_type).toBe('bearer');
    const { payload, protectedHeader } = await verifyOffline(tokens.access_token);
    expect(protectedHeader).toMatchObject({ typ: 'at+jwt', kid: expect.any(String) });
    expect(payload).toMatchObject({ iss: issuer.origin, aud: LEDGER, sub: service.client.client_id, client_id: service.client.client_id, scope: 'notes:read', jti: expect.any(String) });
    expect(payload.exp! - payload.iat!).toBe(tokens.expires_in);
    // Latchkey's own data API is not the ledger.
    expect((await fetch(new URL(NOTES, issuer), { headers: { authorization: `Bearer ${tokens.access_token}` } })).status).toBe(401);
  });

  it('client_credentials with resource= for the private_key_jwt, DPoP-bound client: the JWT carries cnf.jkt of its DPoP key', async () => {
    const keys = await oauth.generateKeyPair('ES256');
    const dpop = oauth.DPoP(fapi.client, keys);
    const tokens = await clientCredentialsGrant(as, fapi.client, fapi.auth, new URLSearchParams({ scope: 'notes:read', resource: LEDGER }), { DPoP: dpop, ...INSECURE });
    expect(tokens.token_type).toBe('dpop');
    const { payload } = await verifyOffline(tokens.access_token);
    expect(payload).toMatchObject({ aud: LEDGER, sub: fapi.client.client_id, client_id: fapi.client.client_id, cnf: { jkt: await calculateJwkThumbprint(await exportJWK(keys.publicKey), 'sha256') } });
  });
});
