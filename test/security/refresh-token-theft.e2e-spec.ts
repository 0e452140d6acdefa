/**
 * Threat: a refresh token is stolen and replayed (RFC 9700 §4.14, RFC 6819 §5.2.2.3). Defences:
 * rotation (each refresh token works once), reuse detection that revokes the whole family
 * (RFC 9700 §4.14.2), binding to the client it was issued to (RFC 6749 §6, RFC 6819 §5.2.2.2),
 * revocation (RFC 7009) and an atomic rotation that a burst of parallel requests cannot fork.
 * The refresh grace (REFRESH_REUSE_GRACE_SECONDS) is no way around reuse detection once the
 * successor it would answer has itself been used (issue 43, finding 5).
 */
import { jest } from '@jest/globals';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { TokensService } from '../../src/tokens/tokens.service.js';
import { obtainTokens, type IssuedTokens } from '../helpers/api-client.js';
import { startAnotherInstance } from '../helpers/app-at-issuer.js';
import { basicAuth, tokenRequest, type TokenResult, introspect as introspectAs } from '../helpers/oauth-flow.js';
import { TestApp, type RegisteredClient, type TestUser } from '../helpers/test-app.js';
import { withEnv } from '../helpers/with-env.js';

const PARALLEL = 20;

describe('refresh token theft and reuse (RFC 9700 §4.14, RFC 6819 §5.2.2.3)', () => {
  let app: TestApp;
  let user: TestUser;
  let client: RegisteredClient;
  let otherClient: RegisteredClient;
  let resourceServer: RegisteredClient;
  /** A second instance on the same database with the grace on, as a deployment has it (10 s, the default); the rest of this file runs with 0. */
  let grace: NestFastifyApplication;
  let graceUrl: string;

  beforeAll(async () => {
    app = await TestApp.start({ RATE_LIMIT_CLIENT_PER_MINUTE: '0', RATE_LIMIT_API_PER_MINUTE: '0' });
    ({ nest: grace, baseUrl: graceUrl } = await withEnv({ REFRESH_REUSE_GRACE_SECONDS: '10' }, startAnotherInstance));
    user = await app.createUser();
    client = await app.createClient({ scope: 'notes:read notes:write' });
    otherClient = await app.createClient({ scope: 'notes:read notes:write' });
    resourceServer = await app.createClient({ grantTypes: ['client_credentials'], scope: 'tokens:introspect' });
  });
  afterAll(async () => {
    await grace?.close();
    await app?.stop();
  });

  function refresh(by: RegisteredClient, refreshToken: string): Promise<TokenResult> {
    return tokenRequest(app, by, { grant_type: 'refresh_token', refresh_token: refreshToken });
  }

  async function issue(): Promise<Required<IssuedTokens>> {
    const tokens = await obtainTokens(app, client, user, 'notes:read notes:write');
    if (tokens.refreshToken === undefined) throw new Error('No refresh token issued');
    return { ...tokens, refreshToken: tokens.refreshToken };
  }

  const introspect = (token: string) => introspectAs(app, resourceServer, token);

  async function apiStatus(accessToken: string): Promise<number> {
    return (await fetch(app.url('/api/v1/notes'), { headers: { authorization: `Bearer ${accessToken}` } })).status;
  }

  function expectInvalidGrant(reply: TokenResult): void {
    expect({ status: reply.status, error: reply.body.error }).toEqual({ status: 400, error: 'invalid_grant' });
  }

  describe('RFC 9700 §4.14.2: refresh token rotation', () => {
    it('refuses a refresh token once it has been used, while its successor works', async () => {
      const first = await issue();
      const rotated = await refresh(client, first.refreshToken);
      expect(rotated.status).toBe(200);
      expect(rotated.body.refresh_token).toEqual(expect.stringMatching(/^lk_rt_/));
      expect(rotated.body.refresh_token).not.toBe(first.refreshToken);

      expectInvalidGrant(await refresh(client, first.refreshToken));
    });

    it('revokes the whole family when a rotated token is replayed: the newest refresh token and every access token die', async () => {
      const first = await issue();
      const second = await refresh(client, first.refreshToken);
      const third = await refresh(client, String(second.body.refresh_token));
      expect([second.status, third.status]).toEqual([200, 200]);
      const newestRefresh = String(third.body.refresh_token);
      const accessTokens = [first.accessToken, String(second.body.access_token), String(third.body.access_token)];
      // Before the replay everything not yet rotated is alive: the attack is what kills it.
      expect(await introspect(newestRefresh)).toMatchObject({ active: true });
      expect(await apiStatus(accessTokens[2])).toBe(200);

      // The attacker (or the victim, whichever comes second) replays the stolen, already-rotated token.
      expectInvalidGrant(await refresh(client, first.refreshToken));

      expectInvalidGrant(await refresh(client, newestRefresh));
      expect(await introspect(newestRefresh)).toEqual({ active: false });
      for (const accessToken of accessTokens) {
        expect(await introspect(accessToken)).toEqual({ active: false });
        expect(await apiStatus(accessToken)).toBe(401);
      }
    });

    it(`lets exactly one of ${PARALLEL} parallel uses of one refresh token succeed`, async () => {
      const first = await issue();
      const replies = await Promise.all(Array.from({ length: PARALLEL }, () => refresh(client, first.refreshToken)));
      const tally: Record<string, number> = {};
      for (const reply of replies) {
        const key = reply.status === 200 ? '200' : `${reply.status} ${String(reply.body.error)}`;
        tally[key] = (tally[key] ?? 0) + 1;
      }
      expect(tally).toEqual({ '200': 1, '400 invalid_grant': PARALLEL - 1 });
      // The losers are reuse of a rotated token: the winner's new tokens are revoked with the family.
      const winner = replies.find((reply) => reply.status === 200)!;
      expectInvalidGrant(await refresh(client, String(winner.body.refresh_token)));
      expect(await apiStatus(String(winner.body.access_token))).toBe(401);
    });
  });

  describe('RFC 9700 §4.14.2: the refresh grace answers a repeat only while the successor is unused (issue 43, finding 5)', () => {
    afterEach(() => jest.restoreAllMocks());

    /** POST /token at the instance with the grace. */
    async function refreshWithGrace(refreshToken: string): Promise<TokenResult> {
      const response = await fetch(`${graceUrl}/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basicAuth(client.clientId, client.clientSecret!) },
        body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken }).toString(),
      });
      return { status: response.status, headers: response.headers, body: (await response.json()) as Record<string, unknown> };
    }

    it('answers a repeat while the successor is unused with the same pair, and the successor then rotates normally (the control)', async () => {
      const first = await issue();
      const once = await refreshWithGrace(first.refreshToken);
      const again = await refreshWithGrace(first.refreshToken);
      expect(once.status).toBe(200);
      expect({ status: again.status, access_token: again.body.access_token, refresh_token: again.body.refresh_token }).toEqual({ status: 200, access_token: once.body.access_token, refresh_token: once.body.refresh_token });
      expect((await refreshWithGrace(String(once.body.refresh_token))).status).toBe(200);
    });

    it('treats the rotated token presented again after its successor was used as reuse, within the window: invalid_grant, and the newest tokens die with the family', async () => {
      const t0 = await issue();
      const r1 = await refreshWithGrace(t0.refreshToken);
      const r2 = await refreshWithGrace(String(r1.body.refresh_token));
      expect([r1.status, r2.status]).toEqual([200, 200]);
      const newestRefresh = String(r2.body.refresh_token);
      const accessTokens = [t0.accessToken, String(r1.body.access_token), String(r2.body.access_token)];
      expect(await apiStatus(accessTokens[2])).toBe(200);

      // r1 was used, so the client provably received the first answer: t0 again is no retry.
      const replay = await refreshWithGrace(t0.refreshToken);
      expectInvalidGrant(replay);
      expect(replay.body.access_token).toBeUndefined();

      expectInvalidGrant(await refreshWithGrace(newestRefresh));
      expect(await introspect(newestRefresh)).toEqual({ active: false });
      for (const accessToken of accessTokens) expect(await apiStatus(accessToken)).toBe(401);
    });

    it('treats a repeat whose successor is used while the repeat is in flight as reuse: the database decides, not what the instance read first', async () => {
      const t0 = await issue();
      const r1 = await refreshWithGrace(t0.refreshToken);
      let r2: TokenResult | undefined;
      // The repeat reads t0 (rotated, within the window), then r1 rotates and commits elsewhere
      // before the repeat answers: what it read no longer tells whether r1 is unused.
      const tokens = grace.get(TokensService);
      const read = tokens.findByValue.bind(tokens);
      jest.spyOn(tokens, 'findByValue').mockImplementationOnce(async (value: string) => {
        const row = await read(value);
        r2 = await refresh(client, String(r1.body.refresh_token));
        return row;
      });
      expectInvalidGrant(await refreshWithGrace(t0.refreshToken));
      expect(r2?.status).toBe(200);
      expectInvalidGrant(await refresh(client, String(r2!.body.refresh_token)));
      expect(await apiStatus(String(r2!.body.access_token))).toBe(401);
    });

    it('keeps one chain when a repeat races the successor\'s own rotation: either both are answered and the chain goes on, or the repeat is reuse and the whole family dies', async () => {
      for (let round = 0; round < 5; round++) {
        const t0 = await issue();
        const r1 = await refreshWithGrace(t0.refreshToken);
        const [repeat, rotation] = await Promise.all([refreshWithGrace(t0.refreshToken), refresh(client, String(r1.body.refresh_token))]);
        expect(rotation.status).toBe(200);
        const next = await refresh(client, String(rotation.body.refresh_token));
        if (repeat.status === 200) {
          expect(repeat.body.refresh_token).toBe(r1.body.refresh_token);
          expect(next.status).toBe(200);
        } else {
          expectInvalidGrant(repeat);
          expectInvalidGrant(next);
          expect(await apiStatus(String(rotation.body.access_token))).toBe(401);
        }
      }
    });
  });

  describe('RFC 6749 §6, RFC 6819 §5.2.2.2: a refresh token is bound to its client', () => {
    it('refuses client A\'s refresh token presented by client B, and it stays usable by A', async () => {
      const tokens = await issue();
      expectInvalidGrant(await refresh(otherClient, tokens.refreshToken));
      // Another client's attempt is not reuse by the owner: A's grant is untouched.
      expect((await refresh(client, tokens.refreshToken)).status).toBe(200);
    });
  });

  describe('RFC 7009 §2.1: a revoked refresh token', () => {
    it('is refused at /token, and its access token dies with it', async () => {
      const tokens = await issue();
      const revoked = await fetch(app.url('/revoke'), {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basicAuth(client.clientId, client.clientSecret!) },
        body: new URLSearchParams({ token: tokens.refreshToken, token_type_hint: 'refresh_token' }).toString(),
      });
      expect(revoked.status).toBe(200);
      expectInvalidGrant(await refresh(client, tokens.refreshToken));
      expect(await introspect(tokens.refreshToken)).toEqual({ active: false });
      expect(await apiStatus(tokens.accessToken)).toBe(401);
    });
  });
});
