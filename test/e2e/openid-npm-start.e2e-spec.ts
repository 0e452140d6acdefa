/**
 * The two certified relying-party libraries, unmodified, against the server started as `npm start`
 * starts it (package.json's start script: its environment, Node options and dist/src/main.js, in a
 * child process) with users and clients made by the admin CLI, as the walk-through of docs/getting-started.md does.
 */
import type { ChildProcess } from 'node:child_process';
import * as oauth from 'oauth4webapi';
import * as oidc from 'openid-client';
import { runCli } from '../helpers/cli.js';
import { startAsNpmStart, stopServer } from '../helpers/npm-start.js';
import { authorizationUrl } from '../helpers/oauth4webapi.js';
import { signIn } from '../helpers/oauth-flow.js';
import { dropTestDatabase } from '../helpers/test-database.js';

const REDIRECT_URI = 'http://127.0.0.1:8080/callback';
const SIGNED_OUT = 'http://127.0.0.1:8080/';
const USER = { username: 'alice', password: 'correct horse battery staple' };

describe('OpenID Connect against `npm start`', () => {
  let server: ChildProcess;
  let issuer: URL;
  let client: { client_id: string; client_secret: string };

  beforeAll(async () => {
    ({ server, issuer } = await startAsNpmStart());
    expect((await runCli(['users:create', '--username', USER.username, '--password', USER.password, '--email', 'alice@example.com', '--name', 'Alice Liddell'])).code).toBe(0);
    const created = await runCli(['clients:create', '--name', 'My app', '--redirect-uri', REDIRECT_URI, '--post-logout-redirect-uri', SIGNED_OUT, '--scope', 'notes:read']);
    client = JSON.parse(created.stdout) as typeof client;
  });
  afterAll(async () => {
    await stopServer(server);
    await dropTestDatabase();
  });

  it('openid-client: signs in with PKCE and nonce, reads userinfo, refreshes, signs out', async () => {
    const config = await oidc.discovery(issuer, client.client_id, undefined, oidc.ClientSecretBasic(client.client_secret), { execute: [oidc.allowInsecureRequests] });
    const verifier = oidc.randomPKCECodeVerifier();
    const nonce = oidc.randomNonce();
    const state = oidc.randomState();
    const url = oidc.buildAuthorizationUrl(config, { redirect_uri: REDIRECT_URI, scope: 'openid profile email notes:read', code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', nonce, state });
    const tokens = await oidc.authorizationCodeGrant(config, await signIn(USER, url), { pkceCodeVerifier: verifier, expectedNonce: nonce, expectedState: state });
    const claims = tokens.claims()!;
    expect(claims.nonce).toBe(nonce);
    const info = await oidc.fetchUserInfo(config, tokens.access_token, claims.sub);
    expect(info).toEqual(expect.objectContaining({ sub: claims.sub, name: 'Alice Liddell', email: 'alice@example.com', email_verified: false }));
    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
    expect(refreshed.claims()!.sub).toBe(claims.sub);
    const end = await fetch(oidc.buildEndSessionUrl(config, { id_token_hint: refreshed.id_token!, post_logout_redirect_uri: SIGNED_OUT, state: 'bye' }), { redirect: 'manual' });
    expect([end.status, end.headers.get('location')]).toEqual([303, `${SIGNED_OUT}?state=bye`]);
  });

  it('oauth4webapi: discovers with algorithm oidc, and validates the ID token of a code exchange', async () => {
    const options = { [oauth.allowInsecureRequests]: true } as const;
    const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oidc', ...options }));
    const rp: oauth.Client = { client_id: client.client_id };
    const verifier = oauth.generateRandomCodeVerifier();
    const nonce = oauth.generateRandomNonce();
    const url = authorizationUrl(as, { response_type: 'code', client_id: rp.client_id, redirect_uri: REDIRECT_URI, scope: 'openid', nonce, code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' });
    const params = oauth.validateAuthResponse(as, rp, await signIn(USER, url));
    const response = await oauth.authorizationCodeGrantRequest(as, rp, oauth.ClientSecretBasic(client.client_secret), params, REDIRECT_URI, verifier, options);
    const result = await oauth.processAuthorizationCodeResponse(as, rp, response, { expectedNonce: nonce, requireIdToken: true });
    expect(oauth.getValidatedIdTokenClaims(result)!.iss).toBe(issuer.origin);
  });
});
