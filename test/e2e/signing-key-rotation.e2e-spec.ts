/**
 * Rotating the ID-token signing key with the admin CLI while the server runs (OpenID Connect
 * Core §10.1.1: a new key is published before it is used; RFC 7517 §5: the JWKS at jwks_uri).
 * The new key is published at once, signs one SIGNING_KEY_PUBLISH_LEAD_SECONDS later, and the old
 * key stays published until every ID token it signed has expired (activation + ID_TOKEN_TTL_SECONDS).
 * The server runs with an 8 s lead and reloads its keys every second, so the schedule plays out here.
 */
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { setTimeout as sleep } from 'node:timers/promises';
import * as oidc from 'openid-client';
import { ClientsService } from '../../src/clients/clients.service.js';
import type { SigningKeyView } from '../../src/signing/signing-key-vault.js';
import { UsersService } from '../../src/users/users.service.js';
import { startAtIssuer } from '../helpers/app-at-issuer.js';
import { Browser } from '../helpers/browser.js';
import { runCli } from '../helpers/cli.js';
import { authorizeAsUser } from '../helpers/oauth-flow.js';
import type { TestUser } from '../helpers/test-app.js';
import { dropTestDatabase } from '../helpers/test-database.js';

const REDIRECT_URI = 'http://127.0.0.1:9/callback';
// Long enough that a sign-in and a few JWKS reads fit inside it on a loaded CI machine (2 s did not).
const LEAD_SECONDS = 8;
const RELOAD_SECONDS = 1;
const ID_TOKEN_TTL_SECONDS = 3600;

/** A successful CLI run: exit 0, nothing on stderr, one JSON document on stdout. */
async function cliJson<T>(args: string[]): Promise<T> {
  const result = await runCli(args);
  expect({ args, code: result.code, stderr: result.stderr }).toEqual({ args, code: 0, stderr: '' });
  return JSON.parse(result.stdout) as T;
}

const byKid = (keys: SigningKeyView[], kid: string): SigningKeyView => {
  const key = keys.find((k) => k.kid === kid);
  if (!key) throw new Error(`keys:list has no key ${kid}: ${JSON.stringify(keys)}`);
  return key;
};

describe('signing key rotation (keys:rotate while the server runs)', () => {
  let nest: NestFastifyApplication;
  let config: oidc.Configuration;
  let clientId: string;
  let jwksUri: URL;
  const user: TestUser = { username: `rotator_${Date.now().toString(36)}`, password: 'correct horse battery staple' };
  let initial: SigningKeyView[];
  let kidA: string;
  let tokenA: string;

  /** A complete code flow with PKCE and nonce, as a relying party runs it; returns the ID token. */
  async function signIn(): Promise<string> {
    const verifier = oidc.randomPKCECodeVerifier();
    const nonce = oidc.randomNonce();
    const url = oidc.buildAuthorizationUrl(config, { redirect_uri: REDIRECT_URI, scope: 'openid', nonce, code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' });
    const page = await authorizeAsUser(new Browser(url.origin), user, url.href);
    if (!page.location) throw new Error(`Expected a redirect to the client, got ${page.status}:\n${page.body}`);
    const tokens = await oidc.authorizationCodeGrant(config, new URL(page.location), { pkceCodeVerifier: verifier, expectedNonce: nonce, idTokenExpected: true });
    return tokens.id_token!;
  }

  const kidOf = (idToken: string): string | undefined => decodeProtectedHeader(idToken).kid;

  async function publishedKids(): Promise<string[]> {
    const response = await fetch(jwksUri);
    expect(response.status).toBe(200);
    return ((await response.json()) as { keys: { kid: string }[] }).keys.map((key) => key.kid);
  }

  beforeAll(async () => {
    const { nest: app, issuer } = await startAtIssuer({
      SIGNING_KEY_PUBLISH_LEAD_SECONDS: String(LEAD_SECONDS),
      SIGNING_KEY_RELOAD_SECONDS: String(RELOAD_SECONDS),
      ID_TOKEN_TTL_SECONDS: String(ID_TOKEN_TTL_SECONDS),
    });
    nest = app;
    await nest.get(UsersService).create(user.username, user.password);
    const { client, secret } = await nest.get(ClientsService).create({ name: 'rotation RP', redirectUris: [REDIRECT_URI], grantTypes: ['authorization_code'] as never });
    clientId = client.id;
    config = await oidc.discovery(issuer, client.id, undefined, oidc.ClientSecretBasic(secret!), { execute: [oidc.allowInsecureRequests] });
    jwksUri = new URL(config.serverMetadata().jwks_uri!);
    // The first CLI call may build dist/ (src/ edited since the last build): outside the timed part.
    initial = await cliJson<SigningKeyView[]>(['keys:list']);
    tokenA = await signIn();
    kidA = kidOf(tokenA)!;
  }, 180_000);
  afterAll(async () => {
    await nest?.close();
    await dropTestDatabase();
  });

  it('starts with one signing key per algorithm; the first ID token is signed with the RS256 one', () => {
    expect(initial.map((key) => [key.alg, key.generation, key.state, key.published_until])).toEqual(
      expect.arrayContaining([
        ['RS256', 1, 'signing', null],
        ['ES256', 1, 'signing', null],
        ['EdDSA', 1, 'signing', null],
      ]),
    );
    expect(initial).toHaveLength(3);
    expect(decodeProtectedHeader(tokenA).alg).toBe('RS256');
    expect(kidA).toBe(initial.find((key) => key.alg === 'RS256')!.kid);
  });

  it('keys:rotate --alg HS256 is refused with the supported algorithms named, and writes nothing', async () => {
    const result = await runCli(['keys:rotate', '--alg', 'HS256']);
    expect(result.code).not.toBe(0);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/unsupported --alg HS256/);
    for (const alg of ['RS256', 'ES256', 'EdDSA']) expect(result.stderr).toContain(alg);
    expect(await cliJson<SigningKeyView[]>(['keys:list'])).toEqual(initial);
  });

  describe('keys:rotate --alg RS256', () => {
    let rotated: SigningKeyView[];
    let kidB: string;
    let activatesAt: number;
    let listed: SigningKeyView[];
    let tokenDuringLead: string;
    let issuedDuringLeadBy: number;
    let jwksHeldBothAt: number | undefined;

    beforeAll(async () => {
      rotated = await cliJson<SigningKeyView[]>(['keys:rotate', '--alg', 'RS256']);
      kidB = rotated[0]?.kid;
      activatesAt = Date.parse(rotated[0]?.activates_at);
      tokenDuringLead = await signIn();
      issuedDuringLeadBy = Date.now();
      // The ring reloads in the background once its copy is older than RELOAD_SECONDS and a request comes.
      for (const deadline = activatesAt; Date.now() < deadline && jwksHeldBothAt === undefined; await sleep(100)) {
        const kids = await publishedKids();
        if (kids.includes(kidA) && kids.includes(kidB)) jwksHeldBothAt = Date.now();
      }
      listed = await cliJson<SigningKeyView[]>(['keys:list']);
    }, 60_000);

    it('prints the new key alone: RS256, the next generation, state "next", signing one publish lead after its creation', () => {
      expect(rotated).toEqual([expect.objectContaining({ alg: 'RS256', generation: 2, state: 'next', published_until: null })]);
      expect(kidB).not.toBe(kidA);
      expect(activatesAt - Date.parse(rotated[0].created_at)).toBeGreaterThanOrEqual(LEAD_SECONDS * 1000 - 1000);
      expect(activatesAt - Date.parse(rotated[0].created_at)).toBeLessThanOrEqual(LEAD_SECONDS * 1000 + 1000);
    });

    it('keys:list shows the old key still signing and the new one next; the other algorithms are untouched', () => {
      const stateOf = (kid: string) => byKid(listed, kid).state;
      expect(listed).toHaveLength(4);
      expect(stateOf(kidA)).toBe('signing');
      expect(stateOf(kidB)).toBe('next');
      for (const key of initial.filter((k) => k.alg !== 'RS256')) expect(byKid(listed, key.kid)).toEqual(key);
    });

    it('the JWKS publishes both keys before the new one signs (Core §10.1.1)', () => {
      expect(jwksHeldBothAt).toBeDefined();
      expect(jwksHeldBothAt!).toBeLessThan(activatesAt);
    });

    it('an ID token issued right after the rotation is still signed with the old key', () => {
      // Guards the test's own timing: the sign-in finished before the new key's activation.
      expect(issuedDuringLeadBy).toBeLessThan(activatesAt);
      expect(kidOf(tokenDuringLead)).toBe(kidA);
    });

    describe('once the publish lead has passed', () => {
      let tokenB: string;
      let after: SigningKeyView[];

      beforeAll(async () => {
        await sleep(Math.max(0, activatesAt - Date.now()) + RELOAD_SECONDS * 1000 + 200);
        tokenB = await signIn();
        after = await cliJson<SigningKeyView[]>(['keys:list']);
      }, 60_000);

      it('new ID tokens are signed with the new key, which the JWKS publishes', async () => {
        expect(kidOf(tokenB)).toBe(kidB);
        const { protectedHeader } = await jwtVerify(tokenB, createRemoteJWKSet(jwksUri), { issuer: config.serverMetadata().issuer, audience: clientId });
        expect(protectedHeader).toMatchObject({ alg: 'RS256', kid: kidB });
      });

      it('an ID token signed with the old key still verifies against the JWKS: its key stays published until it expires', async () => {
        expect(await publishedKids()).toEqual(expect.arrayContaining([kidA, kidB]));
        for (const token of [tokenA, tokenDuringLead]) {
          const { protectedHeader } = await jwtVerify(token, createRemoteJWKSet(jwksUri), { issuer: config.serverMetadata().issuer, audience: clientId });
          expect(protectedHeader.kid).toBe(kidA);
        }
      });

      it('keys:list shows the new key signing and the old one retiring until activation + ID_TOKEN_TTL_SECONDS', () => {
        expect(byKid(after, kidB)).toMatchObject({ state: 'signing', published_until: null });
        const old = byKid(after, kidA);
        expect(old.state).toBe('retiring');
        expect(Date.parse(old.published_until!) - Date.parse(byKid(after, kidB).activates_at)).toBe(ID_TOKEN_TTL_SECONDS * 1000);
      });
    });

    it('is recorded in the audit log, by the CLI', async () => {
      const events = await cliJson<{ actor: string; action: string; subject: string; details: Record<string, unknown> }[]>(['audit:list']);
      const rotations = events.filter((event) => event.action === 'signing_key.rotated');
      expect(rotations).toEqual([expect.objectContaining({ actor: 'cli', subject: `signing_key:${kidB}`, details: expect.objectContaining({ alg: 'RS256', generation: 2 }) })]);
      expect(Date.parse(rotations[0].details.activates_at as string)).toBe(activatesAt);
    });
  });
});
