/**
 * The two certified relying-party libraries, unmodified, against the server started as `npm start`
 * starts it (package.json's start script: its environment, Node options and dist/src/main.js, in a
 * child process) with users and clients made by the admin CLI, as the README's walk-through does.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import * as oauth from 'oauth4webapi';
import * as oidc from 'openid-client';
// @ts-expect-error: the benchmark's plain-JavaScript helper has no type declarations.
import { startCommand } from '../../bench/lib/start-command.mjs';
import { freePort } from '../helpers/app-at-issuer.js';
import { Browser } from '../helpers/browser.js';
import { PROJECT, runCli } from '../helpers/cli.js';
import { authorizeAsUser } from '../helpers/oauth-flow.js';
import { createTestDatabase, dropTestDatabase } from '../helpers/test-database.js';

const REDIRECT_URI = 'http://127.0.0.1:8080/callback';
const SIGNED_OUT = 'http://127.0.0.1:8080/';
const USER = { username: 'alice', password: 'correct horse battery staple' };

describe('OpenID Connect against `npm start`', () => {
  let server: ChildProcess;
  let issuer: URL;
  let client: { client_id: string; client_secret: string };

  /** Signs alice in through a browser for the URL the library built; returns the callback URL. */
  async function signIn(url: URL): Promise<URL> {
    const page = await authorizeAsUser(new Browser(url.origin), USER, url.href);
    if (!page.location) throw new Error(`Expected a redirect, got ${page.status}:\n${page.body}`);
    return new URL(page.location);
  }

  beforeAll(async () => {
    await createTestDatabase();
    const port = await freePort();
    issuer = new URL(`http://127.0.0.1:${port}`);
    const start = startCommand() as { env: Record<string, string>; nodeArgs: string[]; entry: string };
    server = spawn(process.execPath, [...start.nodeArgs, start.entry], {
      cwd: PROJECT,
      env: { ...process.env, ...start.env, PORT: String(port), HOST: '127.0.0.1', ISSUER: issuer.origin, METRICS_ENABLED: 'false' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    server.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    server.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    for (let i = 0; i < 300 && !output.includes('Latchkey is listening'); i++) {
      if (server.exitCode !== null) throw new Error(`The server exited during start-up:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    if (!output.includes('Latchkey is listening')) throw new Error(`The server did not start:\n${output}`);
    expect((await runCli(['users:create', '--username', USER.username, '--password', USER.password, '--email', 'alice@example.com', '--name', 'Alice Liddell'])).code).toBe(0);
    const created = await runCli(['clients:create', '--name', 'My app', '--redirect-uri', REDIRECT_URI, '--post-logout-redirect-uri', SIGNED_OUT, '--scope', 'notes:read']);
    client = JSON.parse(created.stdout) as typeof client;
  });
  afterAll(async () => {
    if (server && server.exitCode === null) {
      server.kill('SIGTERM');
      await once(server, 'exit');
    }
    await dropTestDatabase();
  });

  it('openid-client: signs in with PKCE and nonce, reads userinfo, refreshes, signs out', async () => {
    const config = await oidc.discovery(issuer, client.client_id, undefined, oidc.ClientSecretBasic(client.client_secret), { execute: [oidc.allowInsecureRequests] });
    const verifier = oidc.randomPKCECodeVerifier();
    const nonce = oidc.randomNonce();
    const state = oidc.randomState();
    const url = oidc.buildAuthorizationUrl(config, { redirect_uri: REDIRECT_URI, scope: 'openid profile email notes:read', code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', nonce, state });
    const tokens = await oidc.authorizationCodeGrant(config, await signIn(url), { pkceCodeVerifier: verifier, expectedNonce: nonce, expectedState: state });
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
    const url = new URL(as.authorization_endpoint!);
    for (const [name, value] of Object.entries({ response_type: 'code', client_id: rp.client_id, redirect_uri: REDIRECT_URI, scope: 'openid', nonce, code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' })) {
      url.searchParams.set(name, value);
    }
    const params = oauth.validateAuthResponse(as, rp, await signIn(url));
    const response = await oauth.authorizationCodeGrantRequest(as, rp, oauth.ClientSecretBasic(client.client_secret), params, REDIRECT_URI, verifier, options);
    const result = await oauth.processAuthorizationCodeResponse(as, rp, response, { expectedNonce: nonce, requireIdToken: true });
    expect(oauth.getValidatedIdTokenClaims(result)!.iss).toBe(issuer.origin);
  });
});
