/**
 * DPoP proofs (RFC 9449) built by hand with jose and sent over real HTTP, one rule at a time: what
 * the oauth4webapi test cannot show, since a conforming library never sends a bad proof. At the
 * token endpoint (§5, §4.3): a good proof gets a token bound to its key's thumbprint; the nonce
 * rounds (§8); each of the §4.3 checks (typ, asymmetric alg, public key only, signature, htm, htu
 * without its query, iat both ways, jti, one header, size) refuses with invalid_dpop_proof, and a
 * refusal writes no token and leaves the code unredeemed; a proof is accepted once (§11.1). At the
 * protected resources (§7.1, §9): the proof must hash the token (ath), be made with the token's key
 * and name this request; the resource's own use_dpop_nonce round; a bound token is no bearer token
 * (§7.2) and a bearer token is no DPoP token; the challenges. Then the server's nonce policy: off
 * (DPOP_NONCE_REQUIRED=false), and the rotation window of DPOP_NONCE_ROTATION_SECONDS, shown by
 * moving the instance's clock rather than sleeping.
 */
import { jest } from '@jest/globals';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { getDataSourceToken } from '@nestjs/typeorm';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT, type GenerateKeyPairResult, type JWK } from 'jose';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { request as httpRequest, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http';
import type { DataSource } from 'typeorm';
import { ClientsService } from '../../src/clients/clients.service.js';
import { Clock } from '../../src/common/clock.js';
import { DPOP_SIGNING_ALGORITHMS } from '../../src/dpop/dpop-algorithms.js';
import { TokensService } from '../../src/tokens/tokens.service.js';
import { UsersService } from '../../src/users/users.service.js';
import { startAtIssuer } from '../helpers/app-at-issuer.js';
import { Browser } from '../helpers/browser.js';
import { authorizeAsUser, authorizeUrl, basicAuth, newPkce, redirectParams } from '../helpers/oauth-flow.js';
import { rsaKeyWithLargeExponent } from '../helpers/rsa-large-exponent.js';
import type { RegisteredClient, TestUser } from '../helpers/test-app.js';
import { dropTestDatabase } from '../helpers/test-database.js';
import { withEnv } from '../helpers/with-env.js';

const REDIRECT_URI = 'http://127.0.0.1:9/callback';
/** The server's default DPOP_PROOF_MAX_AGE_SECONDS. */
const PROOF_MAX_AGE = 60;
const MAX_PROOF_LENGTH = 8192;
const DPOP_ALGS = DPOP_SIGNING_ALGORITHMS.join(' ');

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
}

/** Who signs a proof and what its JOSE header says; the header's jwk is the signer's public key unless `jwk` replaces it. */
interface Signing {
  keys?: KeyPair;
  alg?: string;
  /** null: no typ at all. */
  typ?: string | null;
  jwk?: JWK;
}

type Claims = Record<string, unknown>;
type KeyPair = GenerateKeyPairResult;

/**
 * One HTTP request through node:http, so that a header may be sent twice (an array value is written
 * as two header lines; fetch would join them into one).
 */
function send(origin: URL, method: string, path: string, headers: OutgoingHttpHeaders = {}, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const all = body === undefined ? headers : { ...headers, 'content-length': Buffer.byteLength(body) };
    const request = httpRequest({ host: origin.hostname, port: origin.port, method, path, headers: all, agent: false }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const json = /^application\/json\b/.test(response.headers['content-type'] ?? '') && text !== '' ? (JSON.parse(text) as Record<string, unknown>) : {};
        resolve({ status: response.statusCode!, headers: response.headers, body: json });
      });
      response.on('error', reject);
    });
    request.on('error', reject);
    request.end(body);
  });
}

const ath = (accessToken: string): string => createHash('sha256').update(accessToken).digest('base64url');
const base64url = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');
const epochSeconds = (date = new Date()): number => Math.floor(date.getTime() / 1000);

async function sign(claims: Claims, { keys, alg = 'ES256', typ = 'dpop+jwt', jwk }: Signing & { keys: KeyPair }): Promise<string> {
  const header = { alg, ...(typ === null ? {} : { typ }), jwk: jwk ?? (await exportJWK(keys.publicKey)) };
  return new SignJWT(claims).setProtectedHeader(header).sign(keys.privateKey);
}

describe('DPoP proofs, one rule at a time (RFC 9449)', () => {
  let nest: NestFastifyApplication;
  let issuer: URL;
  let user: TestUser;
  /** A client_credentials client (scope notes:read) and a code-flow client (openid notes:read). */
  let service: RegisteredClient;
  let webApp: RegisteredClient;
  /** The client's DPoP key (ES256). */
  let holder: KeyPair;
  /** The newest DPoP-Nonce the main instance handed out. */
  let nonce: string;

  /** A request to the main instance; like a client, keeps the newest DPoP-Nonce it is given. */
  async function call(method: string, path: string, headers: OutgoingHttpHeaders = {}, body?: string): Promise<Answer> {
    const answer = await send(issuer, method, path, headers, body);
    if (typeof answer.headers['dpop-nonce'] === 'string') nonce = answer.headers['dpop-nonce'];
    return answer;
  }

  /** The claims of a good proof of `method` `path` on the main instance, with `changes` (an undefined value leaves the claim out). */
  function claimsFor(method: string, path: string, changes: Claims = {}): Claims {
    return { jti: randomUUID(), htm: method, htu: `${issuer.origin}${path}`, iat: epochSeconds(), nonce, ...changes };
  }

  /** A proof for `method` `path`, signed with the holder's key unless `signing` says otherwise. */
  function proof(method: string, path: string, changes: Claims = {}, signing: Signing = {}): Promise<string> {
    return sign(claimsFor(method, path, changes), { ...signing, keys: signing.keys ?? holder });
  }

  /** POST /token as `client` (client_secret_basic), with `dpop` as the DPoP header (an array: the header sent once per value). */
  function tokenRequest(client: RegisteredClient, form: Record<string, string>, dpop?: string | string[]): Promise<Answer> {
    const headers: OutgoingHttpHeaders = { 'content-type': 'application/x-www-form-urlencoded', authorization: basicAuth(client.clientId, client.clientSecret!) };
    if (dpop !== undefined) headers.dpop = dpop;
    return call('POST', '/token', headers, new URLSearchParams(form).toString());
  }

  const clientCredentials = (dpop?: string | string[]): Promise<Answer> => tokenRequest(service, { grant_type: 'client_credentials', scope: 'notes:read' }, dpop);

  /** Sign-in and consent in the browser: a code for `client`, and its PKCE verifier. */
  async function codeFor(client: RegisteredClient, scope: string): Promise<{ code: string; verifier: string }> {
    const pkce = newPkce();
    const page = await authorizeAsUser(new Browser(issuer.origin), user, authorizeUrl(client, { scope, state: 's', code_challenge: pkce.challenge, code_challenge_method: 'S256' }));
    return { code: redirectParams(page).get('code')!, verifier: pkce.verifier };
  }

  function redeem(code: { code: string; verifier: string }, dpop?: string): Promise<Answer> {
    return tokenRequest(webApp, { grant_type: 'authorization_code', code: code.code, redirect_uri: REDIRECT_URI, code_verifier: code.verifier }, dpop);
  }

  async function tokenRows(): Promise<number> {
    const [row] = (await nest.get<DataSource>(getDataSourceToken()).query('SELECT COUNT(*) AS "n" FROM "tokens"')) as { n: number | string }[];
    return Number(row.n);
  }

  /** A token endpoint refusal (RFC 9449 §5, §8): 400, the code in the JSON body, and the nonce offered all the same. */
  function expectTokenRefusal(answer: Answer, error: 'invalid_dpop_proof' | 'use_dpop_nonce', description: RegExp = /./): void {
    expect({ status: answer.status, error: answer.body.error, description: answer.body.error_description, nonce: answer.headers['dpop-nonce'] }).toEqual({
      status: 400,
      error,
      description: expect.stringMatching(description),
      nonce: expect.stringMatching(/^[A-Za-z0-9_-]{24}$/),
    });
  }

  async function register(name: string, options: { grantTypes: string[]; scope: string }): Promise<RegisteredClient> {
    const redirectUris = options.grantTypes.includes('authorization_code') ? [REDIRECT_URI] : [];
    const { client, secret } = await nest.get(ClientsService).create({ name, redirectUris, scope: options.scope, grantTypes: options.grantTypes as never });
    return { clientId: client.id, clientSecret: secret, redirectUri: REDIRECT_URI };
  }

  beforeAll(async () => {
    ({ nest, issuer } = await startAtIssuer());
    user = { username: `dpop_${Date.now().toString(36)}`, password: 'correct horse battery staple' };
    await nest.get(UsersService).create(user.username, user.password);
    service = await register('DPoP service', { grantTypes: ['client_credentials'], scope: 'notes:read' });
    webApp = await register('DPoP web app', { grantTypes: ['authorization_code', 'refresh_token'], scope: 'notes:read' });
    holder = await generateKeyPair('ES256');
    // The first request of a client: a proof without a nonce, answered use_dpop_nonce with one (§8).
    const first = await clientCredentials(await sign({ jti: randomUUID(), htm: 'POST', htu: `${issuer.origin}/token`, iat: epochSeconds() }, { keys: holder }));
    expect(first.body.error).toBe('use_dpop_nonce');
  });
  afterAll(async () => {
    await nest?.close();
    await dropTestDatabase();
  });

  describe('at the token endpoint (§5, §4.3)', () => {
    it('a good proof with the server\'s nonce gets token_type DPoP, a token bound to the key\'s thumbprint, and a DPoP-Nonce header', async () => {
      const answer = await clientCredentials(await proof('POST', '/token'));
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({ access_token: expect.stringMatching(/^lk_at_/), token_type: 'DPoP', scope: 'notes:read' });
      expect(answer.headers['dpop-nonce']).toEqual(expect.stringMatching(/^[A-Za-z0-9_-]{24}$/));
      const stored = await nest.get(TokensService).findByValue(answer.body.access_token as string);
      expect(stored?.dpopJkt).toBe(await calculateJwkThumbprint(await exportJWK(holder.publicKey), 'sha256'));
    });

    it('a proof without a nonce → 400 use_dpop_nonce with the nonce in DPoP-Nonce; the same request with that nonce then passes (§8)', async () => {
      const refused = await clientCredentials(await proof('POST', '/token', { nonce: undefined }));
      expectTokenRefusal(refused, 'use_dpop_nonce');
      const given = refused.headers['dpop-nonce'] as string;
      expect((await clientCredentials(await proof('POST', '/token', { nonce: given }))).status).toBe(200);
    });

    it('a nonce the server never handed out → 400 use_dpop_nonce with the real one', async () => {
      const invented = randomBytes(18).toString('base64url');
      const refused = await clientCredentials(await proof('POST', '/token', { nonce: invented }));
      expectTokenRefusal(refused, 'use_dpop_nonce');
      expect(refused.headers['dpop-nonce']).not.toBe(invented);
    });

    describe('a proof that breaks a §4.3 rule → 400 invalid_dpop_proof', () => {
      const cases: [string, () => Promise<string>, RegExp][] = [
        ['no typ header', () => proof('POST', '/token', {}, { typ: null }), /typ header must be dpop\+jwt/],
        ['typ "JWT"', () => proof('POST', '/token', {}, { typ: 'JWT' }), /typ header must be dpop\+jwt/],
        [
          'alg HS256 with a symmetric (kty oct) jwk',
          async () => {
            const secret = randomBytes(32);
            const jwk: JWK = { kty: 'oct', k: secret.toString('base64url') };
            return new SignJWT(claimsFor('POST', '/token')).setProtectedHeader({ alg: 'HS256', typ: 'dpop+jwt', jwk }).sign(secret);
          },
          /must be signed with one of ES256/,
        ],
        [
          'alg none (no signature)',
          async () => `${base64url({ alg: 'none', typ: 'dpop+jwt', jwk: await exportJWK(holder.publicKey) })}.${base64url(claimsFor('POST', '/token'))}.`,
          /must be signed with one of ES256/,
        ],
        [
          'a jwk that holds the private key (d)',
          async () => {
            const keys = await generateKeyPair('ES256', { extractable: true });
            const privateJwk = await exportJWK(keys.privateKey);
            expect(privateJwk.d).toEqual(expect.any(String));
            return proof('POST', '/token', {}, { keys, jwk: privateJwk });
          },
          /jwk header holds private key members/,
        ],
        [
          // WebCrypto would import this as a public key: without d, an RSA jwk's p, q and CRT members are the private key all the same.
          'an RSA jwk with the private factors (p, q, dp, dq, qi) but no d',
          async () => {
            const keys = await generateKeyPair('PS256', { extractable: true });
            const { d: _d, ...factors } = await exportJWK(keys.privateKey);
            expect(Object.keys(factors)).toEqual(expect.arrayContaining(['p', 'q', 'dp', 'dq', 'qi']));
            return proof('POST', '/token', {}, { keys, alg: 'PS256', jwk: factors });
          },
          /jwk header holds private key members/,
        ],
        ['a signature made with another key than the header\'s jwk', async () => proof('POST', '/token', {}, { keys: await generateKeyPair('ES256'), jwk: await exportJWK(holder.publicKey) }), /signature does not verify/],
        ['htm GET for a POST', () => proof('POST', '/token', { htm: 'GET' }), /htm must be the request's method, POST/],
        ['htu of another path', () => proof('POST', '/token', { htu: `${issuer.origin}/introspect` }), /htu must be http:\/\/127\.0\.0\.1:\d+\/token$/],
        ['htu of another host', () => proof('POST', '/token', { htu: `http://localhost:${issuer.port}/token` }), /htu must be/],
        ['iat 5 minutes old', () => proof('POST', '/token', { iat: epochSeconds() - 300 }), new RegExp(`iat must be within ${PROOF_MAX_AGE} seconds`)],
        ['iat 5 minutes in the future', () => proof('POST', '/token', { iat: epochSeconds() + 300 }), new RegExp(`iat must be within ${PROOF_MAX_AGE} seconds`)],
        ['no jti', () => proof('POST', '/token', { jti: undefined }), /needs a jti/],
      ];

      it.each(cases)('%s', async (_case, make, description) => {
        expectTokenRefusal(await clientCredentials(await make()), 'invalid_dpop_proof', description);
      });
    });

    it('a proof whose RSA jwk has a 3000-bit public exponent → invalid_dpop_proof naming the exponent, though its signature is valid; no token (issue 30, finding 5)', async () => {
      // A working key: verifying its signature costs tens of times an ordinary one, so it is refused before that.
      const large = rsaKeyWithLargeExponent();
      const before = await tokenRows();
      const jwt = await new SignJWT(claimsFor('POST', '/token')).setProtectedHeader({ alg: 'PS256', typ: 'dpop+jwt', jwk: large.publicJwk }).sign(large.privateKey);
      expectTokenRefusal(await clientCredentials(jwt), 'invalid_dpop_proof', /public exponent \(e\) must be 65537/);
      expect(await tokenRows()).toBe(before);
    });

    it('htu with a query and a fragment is accepted: both are ignored when comparing (§4.3 check 9)', async () => {
      const answer = await clientCredentials(await proof('POST', '/token', { htu: `${issuer.origin}/token?client=1#part` }));
      expect({ status: answer.status, tokenType: answer.body.token_type }).toEqual({ status: 200, tokenType: 'DPoP' });
    });

    it.each([
      ['an upper-case scheme and host', (origin: string) => `${origin.replace('http://127.0.0.1', 'HTTP://127.0.0.1')}/token`],
      ['dot segments', (origin: string) => `${origin}/par/../token`],
      ['a percent-encoded unreserved letter', (origin: string) => `${origin}/t%6Fken`],
    ])('htu spelled differently but naming the same URL (%s) is accepted (RFC 3986 §6.2 normalisation, §4.3 check 9)', async (_case, spell) => {
      const htu = spell(issuer.origin);
      expect(htu).not.toBe(`${issuer.origin}/token`);
      const answer = await clientCredentials(await proof('POST', '/token', { htu }));
      expect({ status: answer.status, tokenType: answer.body.token_type }).toEqual({ status: 200, tokenType: 'DPoP' });
    });

    it('two DPoP header lines → 400 invalid_dpop_proof, also a good proof beside an empty line; neither proof is used up (§4.3 check 1)', async () => {
      const [first, second] = [await proof('POST', '/token'), await proof('POST', '/token')];
      expectTokenRefusal(await clientCredentials([first, second]), 'invalid_dpop_proof');
      expectTokenRefusal(await clientCredentials(['', first]), 'invalid_dpop_proof');
      expectTokenRefusal(await clientCredentials([first, '']), 'invalid_dpop_proof');
      expect((await clientCredentials(first)).status).toBe(200);
      expect((await clientCredentials(second)).status).toBe(200);
    });

    it(`a proof longer than ${MAX_PROOF_LENGTH} characters → 400 invalid_dpop_proof, before it is parsed; one just under the limit is accepted`, async () => {
      const padded = async (length: number): Promise<string> => {
        const jti = randomUUID();
        const empty = await proof('POST', '/token', { jti, pad: '' });
        return proof('POST', '/token', { jti, pad: 'x'.repeat(Math.floor(((length - empty.length) * 3) / 4)) });
      };
      const over = await padded(MAX_PROOF_LENGTH + 200);
      expect(over.length).toBeGreaterThan(MAX_PROOF_LENGTH);
      expectTokenRefusal(await clientCredentials(over), 'invalid_dpop_proof', new RegExp(`longer than ${MAX_PROOF_LENGTH} characters`));
      const under = await padded(MAX_PROOF_LENGTH - 4);
      expect(under.length).toBeGreaterThan(MAX_PROOF_LENGTH - 10);
      expect(under.length).toBeLessThanOrEqual(MAX_PROOF_LENGTH);
      expect((await clientCredentials(under)).status).toBe(200);
    });

    it('the same proof sent twice: the second is refused, "already used" (§11.1)', async () => {
      const once = await proof('POST', '/token');
      expect((await clientCredentials(once)).status).toBe(200);
      expectTokenRefusal(await clientCredentials(once), 'invalid_dpop_proof', /already used/);
    });

    it('a refused proof writes no token and leaves the code unredeemed: the same code with a good proof then gets a bound token', async () => {
      const code = await codeFor(webApp, 'notes:read');
      const before = await tokenRows();
      expectTokenRefusal(await redeem(code, await proof('POST', '/token', { htm: 'PUT' })), 'invalid_dpop_proof', /htm/);
      expectTokenRefusal(await redeem(code, await proof('POST', '/token', { nonce: undefined })), 'use_dpop_nonce');
      expect(await tokenRows()).toBe(before);
      const answer = await redeem(code, await proof('POST', '/token'));
      expect(answer.body).toMatchObject({ token_type: 'DPoP', refresh_token: expect.stringMatching(/^lk_rt_/) });
      expect(await tokenRows()).toBeGreaterThan(before);
    });
  });

  describe('at the protected resources (§7.1, §9)', () => {
    /** A DPoP-bound token of the holder's key that speaks for the user (openid notes:read), and a plain bearer token. */
    let bound: string;
    let bearer: string;

    /** A request to a protected resource with `Authorization: <authorization>` and, unless undefined, the DPoP header. */
    function resource(method: string, path: string, authorization: string | undefined, dpop?: string): Promise<Answer> {
      const headers: OutgoingHttpHeaders = {};
      if (authorization !== undefined) headers.authorization = authorization;
      if (dpop !== undefined) headers.dpop = dpop;
      return call(method, path, headers);
    }

    /** The proof for `method` `path` with the bound token: path without its query in htu, ath of the token. */
    const proofWithToken = (method: string, path: string, changes: Claims = {}, signing: Signing = {}): Promise<string> =>
      proof(method, path.split('?')[0], { ath: ath(bound), ...changes }, signing);

    function expectChallenge(answer: Answer, status: number, challenge: RegExp): void {
      expect({ status: answer.status, challenge: answer.headers['www-authenticate'] }).toEqual({ status, challenge: expect.stringMatching(challenge) });
    }

    const dpopChallenge = (error: string, description = '[^"]+'): RegExp => new RegExp(`^DPoP algs="${DPOP_ALGS}", error="${error}", error_description="${description}"$`);

    beforeAll(async () => {
      const tokens = await redeem(await codeFor(webApp, 'openid notes:read'), await proof('POST', '/token'));
      expect(tokens.body.token_type).toBe('DPoP');
      bound = tokens.body.access_token as string;
      const plain = await clientCredentials();
      expect(plain.body.token_type).toBe('bearer');
      bearer = plain.body.access_token as string;
    });

    it('Authorization: DPoP with a proof of this request and token → 200 and a DPoP-Nonce header, on the data API (query ignored in htu) and GET/POST /userinfo', async () => {
      const notes = await resource('GET', '/api/v1/notes?limit=5', `DPoP ${bound}`, await proofWithToken('GET', '/api/v1/notes?limit=5'));
      expect({ status: notes.status, nonce: notes.headers['dpop-nonce'] }).toEqual({ status: 200, nonce: expect.stringMatching(/^[A-Za-z0-9_-]{24}$/) });
      for (const method of ['GET', 'POST']) {
        const userinfo = await resource(method, '/userinfo', `DPoP ${bound}`, await proofWithToken(method, '/userinfo'));
        expect({ status: userinfo.status, sub: userinfo.body.sub }).toEqual({ status: 200, sub: expect.any(String) });
      }
    });

    it('no DPoP header → 401 invalid_dpop_proof under the DPoP scheme, naming the algorithms', async () => {
      expectChallenge(await resource('GET', '/api/v1/notes', `DPoP ${bound}`), 401, dpopChallenge('invalid_dpop_proof'));
    });

    it('a proof without ath, or with the ath of another token → 401 invalid_dpop_proof', async () => {
      const expected = dpopChallenge('invalid_dpop_proof', '[^"]*ath must be the hash of the access token[^"]*');
      expectChallenge(await resource('GET', '/api/v1/notes', `DPoP ${bound}`, await proofWithToken('GET', '/api/v1/notes', { ath: undefined })), 401, expected);
      expectChallenge(await resource('GET', '/api/v1/notes', `DPoP ${bound}`, await proofWithToken('GET', '/api/v1/notes', { ath: ath(bearer) })), 401, expected);
    });

    it('a proof made with another key than the one the token is bound to → 401 invalid_dpop_proof', async () => {
      const thief = await generateKeyPair('ES256');
      const answer = await resource('GET', '/api/v1/notes', `DPoP ${bound}`, await proofWithToken('GET', '/api/v1/notes', {}, { keys: thief }));
      expectChallenge(answer, 401, dpopChallenge('invalid_dpop_proof', '[^"]*not made with the key this token is bound to[^"]*'));
    });

    it('a proof of another request → 401 invalid_dpop_proof: one for /api/v1/notes used at /userinfo (htu), one for POST used with GET (htm)', async () => {
      expectChallenge(await resource('GET', '/userinfo', `DPoP ${bound}`, await proofWithToken('GET', '/api/v1/notes')), 401, dpopChallenge('invalid_dpop_proof', '[^"]*htu must be [^"]*/userinfo'));
      expectChallenge(await resource('GET', '/api/v1/notes', `DPoP ${bound}`, await proofWithToken('POST', '/api/v1/notes')), 401, dpopChallenge('invalid_dpop_proof', '[^"]*htm must be [^"]*GET'));
    });

    it('a proof without the nonce → 401 use_dpop_nonce with a DPoP-Nonce header; resent with it → 200 (§9)', async () => {
      const refused = await resource('GET', '/api/v1/notes', `DPoP ${bound}`, await proofWithToken('GET', '/api/v1/notes', { nonce: undefined }));
      expectChallenge(refused, 401, dpopChallenge('use_dpop_nonce'));
      expect(refused.body.error).toBe('use_dpop_nonce');
      const given = refused.headers['dpop-nonce'];
      expect(given).toEqual(expect.stringMatching(/^[A-Za-z0-9_-]{24}$/));
      expect((await resource('GET', '/api/v1/notes', `DPoP ${bound}`, await proofWithToken('GET', '/api/v1/notes', { nonce: given }))).status).toBe(200);
    });

    it('the bound token as "Authorization: Bearer" → 401 invalid_token under Bearer, with the DPoP challenge beside it that would work (§7.2)', async () => {
      expectChallenge(await resource('GET', '/api/v1/notes', `Bearer ${bound}`), 401, new RegExp(`^Bearer realm="[^"]+", error="invalid_token", error_description="[^"]*DPoP-bound[^"]*", DPoP algs="${DPOP_ALGS}"$`));
      // With a good proof too: the scheme decides, not the presence of a proof.
      expectChallenge(await resource('GET', '/api/v1/notes', `Bearer ${bound}`, await proofWithToken('GET', '/api/v1/notes')), 401, /^Bearer realm="[^"]+", error="invalid_token"/);
    });

    it('a plain bearer token as "Authorization: DPoP" with a proof → 401 invalid_token', async () => {
      const answer = await resource('GET', '/api/v1/notes', `DPoP ${bearer}`, await proof('GET', '/api/v1/notes', { ath: ath(bearer) }));
      expectChallenge(answer, 401, /^DPoP algs="[^"]+", error="invalid_token", error_description="[^"]*not DPoP-bound/);
    });

    it('the same proof sent twice to the resource: the second is refused, "already used" (§11.1)', async () => {
      const once = await proofWithToken('GET', '/api/v1/notes');
      expect((await resource('GET', '/api/v1/notes', `DPoP ${bound}`, once)).status).toBe(200);
      expectChallenge(await resource('GET', '/api/v1/notes', `DPoP ${bound}`, once), 401, dpopChallenge('invalid_dpop_proof', 'This DPoP proof was already used'));
    });

    it('no credentials at all → 401 whose WWW-Authenticate offers Bearer, DPoP (with its algs) and MAC', async () => {
      const answer = await resource('GET', '/api/v1/notes', undefined);
      expect({ status: answer.status, challenge: answer.headers['www-authenticate'], nonce: answer.headers['dpop-nonce'] }).toEqual({
        status: 401,
        challenge: expect.stringMatching(new RegExp(`^Bearer realm="[^"]+", DPoP algs="${DPOP_ALGS}", MAC$`)),
        nonce: undefined,
      });
    });

    it.each([
      ['two tokens', () => `DPoP ${bound} ${bound}`],
      ['a token and a parameter', () => `DPoP ${bound}, x="y"`],
    ])('a malformed "Authorization: DPoP" (%s) → 400 invalid_request under the DPoP scheme', async (_case, authorization) => {
      const answer = await resource('GET', '/api/v1/notes', authorization(), await proofWithToken('GET', '/api/v1/notes'));
      expect({ status: answer.status, error: answer.body.error, challenge: answer.headers['www-authenticate'] }).toEqual({
        status: 400,
        error: 'invalid_request',
        challenge: expect.stringMatching(new RegExp(`^DPoP algs="${DPOP_ALGS}", error="invalid_request", error_description="[^"]*exactly one token`)),
      });
    });

    it('"Authorization: DPoP" with no token at all is no credentials (the trailing space does not survive the trip, RFC 9110 §5.5): 401 with the bare challenges, as "Bearer" alone', async () => {
      // Not invalid_request: the guard's `DPoP +` pattern needs a space after the scheme, and HTTP strips a
      // trailing one, so the header reaches the server as the bare scheme name, which the bearer strategy
      // takes for no credentials. Its invalid_request branch answers only a DPoP header with something
      // after the scheme that is not one token (the case above).
      for (const authorization of ['DPoP ', 'DPoP', 'Bearer']) {
        const answer = await resource('GET', '/api/v1/notes', authorization, await proofWithToken('GET', '/api/v1/notes'));
        expect({ authorization, status: answer.status, error: answer.body.error, challenge: answer.headers['www-authenticate'] }).toEqual({
          authorization,
          status: 401,
          error: 'unauthorized',
          challenge: `Bearer realm="latchkey", DPoP algs="${DPOP_ALGS}", MAC`,
        });
      }
    });
  });

  describe('an instance with DPOP_NONCE_REQUIRED=false', () => {
    let relaxed: NestFastifyApplication;
    let relaxedIssuer: URL;

    beforeAll(async () => {
      ({ nest: relaxed, issuer: relaxedIssuer } = await withEnv({ DPOP_NONCE_REQUIRED: 'false' }, () => startAtIssuer()));
    });
    afterAll(async () => relaxed?.close());

    it('accepts a proof without a nonce and sends no DPoP-Nonce header', async () => {
      const noNonce = await sign({ jti: randomUUID(), htm: 'POST', htu: `${relaxedIssuer.origin}/token`, iat: epochSeconds() }, { keys: holder });
      const answer = await send(relaxedIssuer, 'POST', '/token', { 'content-type': 'application/x-www-form-urlencoded', authorization: basicAuth(service.clientId, service.clientSecret!), dpop: noNonce }, 'grant_type=client_credentials');
      expect({ status: answer.status, tokenType: answer.body.token_type, nonce: answer.headers['dpop-nonce'] }).toEqual({ status: 200, tokenType: 'DPoP', nonce: undefined });
    });
  });

  describe('an instance with DPOP_NONCE_ROTATION_SECONDS=10 (its clock moved, not waited for)', () => {
    const ROTATION = 10;
    let rotating: NestFastifyApplication;
    let rotatingIssuer: URL;
    let clock: Clock;

    beforeAll(async () => {
      ({ nest: rotating, issuer: rotatingIssuer } = await withEnv({ DPOP_NONCE_ROTATION_SECONDS: String(ROTATION) }, () => startAtIssuer()));
      clock = rotating.get(Clock);
    });
    afterEach(() => jest.restoreAllMocks());
    afterAll(async () => rotating?.close());

    /** client_credentials at the rotating instance with its clock at `when` (and the proof's iat), `withNonce` in the proof. */
    async function tokenRequestAt(when: Date, withNonce?: string): Promise<Answer> {
      jest.spyOn(clock, 'now').mockReturnValue(when);
      const claims = { jti: randomUUID(), htm: 'POST', htu: `${rotatingIssuer.origin}/token`, iat: epochSeconds(when), nonce: withNonce };
      const headers = { 'content-type': 'application/x-www-form-urlencoded', authorization: basicAuth(service.clientId, service.clientSecret!), dpop: await sign(claims, { keys: holder }) };
      return send(rotatingIssuer, 'POST', '/token', headers, 'grant_type=client_credentials');
    }

    it('a nonce changes every period and is accepted in the period before its own, its own and the next one; two periods away it is refused (§8, §8.2)', async () => {
      // One second into a period, so that nothing depends on where the real clock stands in its own.
      const start = (Math.floor(Date.now() / 1000 / ROTATION) + 1) * ROTATION + 1;
      const period = (n: number): Date => new Date((start + n * ROTATION) * 1000);
      const asked = await tokenRequestAt(period(0));
      expect(asked.body.error).toBe('use_dpop_nonce');
      const given = asked.headers['dpop-nonce'] as string;

      const outcomes: Record<string, { status: number; nonceOffered: string | string[] | undefined }> = {};
      for (const n of [-2, -1, 0, 1, 2]) {
        const answer = await tokenRequestAt(period(n), given);
        outcomes[n] = { status: answer.status, nonceOffered: answer.headers['dpop-nonce'] };
      }
      expect(Object.fromEntries(Object.entries(outcomes).map(([n, o]) => [n, o.status]))).toEqual({ '-2': 400, '-1': 200, '0': 200, '1': 200, '2': 400 });
      // Each period hands out its own nonce.
      expect(new Set(Object.values(outcomes).map((o) => o.nonceOffered)).size).toBe(5);
      expect(outcomes[0].nonceOffered).toBe(given);
      // Refused two periods later, the client is handed the nonce to use now.
      expect((await tokenRequestAt(period(2), outcomes[2].nonceOffered as string)).status).toBe(200);
    });
  });
});
