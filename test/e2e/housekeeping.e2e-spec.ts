/**
 * Housekeeping (issue #5): expired authorization codes and tokens are purged in bounded batches,
 * safely from every instance at once, without weakening refresh-token reuse detection.
 */
import { jest } from '@jest/globals';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { createApp } from '../../src/app.setup.js';
import { AuthorizationCode } from '../../src/codes/authorization-code.entity.js';
import { Clock } from '../../src/common/clock.js';
import { PurgeScheduler } from '../../src/housekeeping/purge.scheduler.js';
import { PurgeService, type PurgeResult } from '../../src/housekeeping/purge.service.js';
import { Token, TokenKind } from '../../src/tokens/token.entity.js';
import { User } from '../../src/users/user.entity.js';
import { obtainTokens } from '../helpers/api-client.js';
import { PROJECT, runCli } from '../helpers/cli.js';
import { tokenRequest } from '../helpers/oauth-flow.js';
import { TestApp, type RegisteredClient, type TestUser } from '../helpers/test-app.js';
import { withEnv } from '../helpers/with-env.js';

const GRACE_SECONDS = 60;
const BATCH_SIZE = 4;
const ACCESS_TTL = 600;
const REFRESH_TTL = 3600;

/** A second instance on the same database, with its own connections; closed, never dropping the database. */
async function startInstance(env: Record<string, string> = {}): Promise<NestFastifyApplication> {
  const nest = await withEnv(env, () => createApp({ level: 'error' }));
  await nest.init();
  return nest;
}

describe(PurgeService.name, () => {
  let app: TestApp;
  let client: RegisteredClient;
  let user: TestUser;
  let userId: string;
  let now: Date;

  beforeAll(async () => {
    app = await TestApp.start({
      PURGE_INTERVAL_SECONDS: '0',
      PURGE_BATCH_SIZE: String(BATCH_SIZE),
      PURGE_GRACE_SECONDS: String(GRACE_SECONDS),
      ACCESS_TOKEN_TTL_SECONDS: String(ACCESS_TTL),
      REFRESH_TOKEN_TTL_SECONDS: String(REFRESH_TTL),
    });
    client = await app.createClient();
    user = await app.createUser();
    userId = (await app.dataSource.getRepository(User).findOneByOrFail({ username: user.username })).id;
  });
  afterAll(async () => app?.stop());

  beforeEach(async () => {
    jest.restoreAllMocks();
    await app.dataSource.createQueryBuilder().delete().from(Token).execute();
    await app.dataSource.createQueryBuilder().delete().from(AuthorizationCode).execute();
    now = new Date(Math.floor(Date.now() / 1000) * 1000);
    setTime(app.clock, now);
  });

  function setTime(clock: Clock, at: Date): void {
    jest.spyOn(clock, 'now').mockReturnValue(at);
  }

  const at = (secondsFromNow: number) => new Date(now.getTime() + secondsFromNow * 1000);

  async function insertCodes(expiresIn: number[], consumed = false): Promise<string[]> {
    const rows = expiresIn.map((seconds) => ({
      id: randomUUID(),
      codeHash: randomBytes(32).toString('hex'),
      clientId: client.clientId,
      userId,
      redirectUri: client.redirectUri,
      redirectUriInRequest: true,
      scope: 'notes:read',
      codeChallenge: null,
      expiresAt: at(seconds),
      consumedAt: consumed ? at(-700) : null,
    }));
    await app.dataSource.getRepository(AuthorizationCode).insert(rows);
    return rows.map((row) => row.id);
  }

  async function insertToken(kind: TokenKind, familyId: string, expiresIn: number, state: { consumed?: boolean; revoked?: boolean } = {}): Promise<string> {
    const id = randomUUID();
    await app.dataSource.getRepository(Token).insert({
      id,
      kind,
      tokenHash: randomBytes(32).toString('hex'),
      familyId,
      clientId: client.clientId,
      userId,
      scope: 'notes:read',
      expiresAt: at(expiresIn),
      consumedAt: state.consumed ? at(-10) : null,
      revokedAt: state.revoked ? at(-10) : null,
    });
    return id;
  }

  const remainingCodes = async () => (await app.dataSource.getRepository(AuthorizationCode).find()).map((row) => row.id).sort();
  const remainingTokens = async () => (await app.dataSource.getRepository(Token).find()).map((row) => row.id).sort();

  it('deletes codes expired for longer than the grace period, consumed or not, in batches, and counts them', async () => {
    const expired = [...(await insertCodes([-GRACE_SECONDS - 1, -3600, -86400, -700, -601])), ...(await insertCodes([-GRACE_SECONDS - 5, -5000, -9000], true))];
    const kept = [...(await insertCodes([600, 1])), ...(await insertCodes([-GRACE_SECONDS + 5], true))];
    // 8 rows in batches of 4: two full batches, then a short (empty) one ends the run.
    expect(await app.app.get(PurgeService).purge()).toEqual({ codes: expired.length, tokens: 0, macNonces: 0, sessions: 0, logoutDeliveries: 0, pushedRequests: 0, jtiUses: 0 });
    expect(await remainingCodes()).toEqual(kept.sort());
    expect(await app.app.get(PurgeService).purge()).toEqual({ codes: 0, tokens: 0, macNonces: 0, sessions: 0, logoutDeliveries: 0, pushedRequests: 0, jtiUses: 0 });
  });

  it('deletes expired access tokens whatever their family, and refresh tokens only once every refresh token of their family has expired', async () => {
    const expired = -GRACE_SECONDS - 1;
    // A family that is over: its last refresh token has expired.
    const over = randomUUID();
    const gone = [
      await insertToken(TokenKind.Access, over, -REFRESH_TTL),
      await insertToken(TokenKind.Refresh, over, -REFRESH_TTL, { consumed: true }),
      await insertToken(TokenKind.Refresh, over, expired),
    ];
    // A family still being refreshed: the rotated refresh token has expired, but the current one
    // has not, and presenting the rotated one again must still revoke the family (RFC 9700 §4.14.2).
    const live = randomUUID();
    gone.push(await insertToken(TokenKind.Access, live, expired));
    const kept = [
      await insertToken(TokenKind.Refresh, live, -REFRESH_TTL, { consumed: true }),
      await insertToken(TokenKind.Refresh, live, REFRESH_TTL),
      await insertToken(TokenKind.Access, live, ACCESS_TTL),
    ];
    // A revoked family goes when its refresh tokens have expired, not before.
    const revoked = randomUUID();
    gone.push(await insertToken(TokenKind.Refresh, revoked, expired, { revoked: true }));
    const revokedLater = randomUUID();
    gone.push(await insertToken(TokenKind.Access, revokedLater, expired, { revoked: true }));
    kept.push(await insertToken(TokenKind.Refresh, revokedLater, 100, { revoked: true }));
    // A client_credentials family: access tokens only. Within the grace period is kept.
    const service = randomUUID();
    gone.push(await insertToken(TokenKind.Access, service, expired));
    kept.push(await insertToken(TokenKind.Access, service, -GRACE_SECONDS + 5));
    // A family whose refresh token expired within the grace period is kept whole.
    const recent = randomUUID();
    kept.push(await insertToken(TokenKind.Refresh, recent, -REFRESH_TTL, { consumed: true }), await insertToken(TokenKind.Refresh, recent, -10));

    expect(await app.app.get(PurgeService).purge()).toEqual({ codes: 0, tokens: gone.length, macNonces: 0, sessions: 0, logoutDeliveries: 0, pushedRequests: 0, jtiUses: 0 });
    expect(await remainingTokens()).toEqual(kept.sort());
  });

  it('refresh-token reuse is still detected after the family’s access tokens and its rotated, expired refresh token were due', async () => {
    const tokens = await obtainTokens(app, client, user, 'notes:read');
    const first = tokens.refreshToken!;
    // Rotate shortly before the first refresh token would expire.
    setTime(app.clock, at(REFRESH_TTL - 600));
    const rotated = await tokenRequest(app, client, { grant_type: 'refresh_token', refresh_token: first });
    expect(rotated.status).toBe(200);
    const second = String(rotated.body.refresh_token);

    // Past the first refresh token's expiry (and the grace): both access tokens and the code go, both refresh tokens stay.
    setTime(app.clock, at(REFRESH_TTL + GRACE_SECONDS + 10));
    expect(await app.app.get(PurgeService).purge()).toEqual({ codes: 1, tokens: 2, macNonces: 0, sessions: 0, logoutDeliveries: 0, pushedRequests: 0, jtiUses: 0 });
    const left = await app.dataSource.getRepository(Token).find();
    expect(left.map((token) => token.kind)).toEqual([TokenKind.Refresh, TokenKind.Refresh]);

    // The rotated token presented again: reuse, and the family (the live second token) is revoked.
    expect((await tokenRequest(app, client, { grant_type: 'refresh_token', refresh_token: first })).body.error).toBe('invalid_grant');
    expect((await tokenRequest(app, client, { grant_type: 'refresh_token', refresh_token: second })).body.error).toBe('invalid_grant');
    expect((await app.dataSource.getRepository(Token).find()).every((token) => token.revokedAt !== null)).toBe(true);

    // Once the last refresh token of the family has expired, the whole family goes.
    setTime(app.clock, at(2 * REFRESH_TTL));
    expect(await app.app.get(PurgeService).purge()).toEqual({ codes: 0, tokens: 2, macNonces: 0, sessions: 0, logoutDeliveries: 0, pushedRequests: 0, jtiUses: 0 });
    expect(await remainingTokens()).toEqual([]);
  });

  describe('concurrent purges', () => {
    const ROWS = 30;

    async function insertExpired(): Promise<void> {
      await insertCodes(Array.from({ length: ROWS }, (_, i) => -GRACE_SECONDS - 1 - i));
      for (let i = 0; i < ROWS; i++) await insertToken(TokenKind.Access, randomUUID(), -GRACE_SECONDS - 1 - i);
    }

    function total(results: PurgeResult[]): PurgeResult {
      return results.reduce((sum, r) => ({ codes: sum.codes + r.codes, tokens: sum.tokens + r.tokens, macNonces: sum.macNonces + r.macNonces, sessions: sum.sessions + r.sessions, logoutDeliveries: sum.logoutDeliveries + r.logoutDeliveries, pushedRequests: sum.pushedRequests + r.pushedRequests, jtiUses: sum.jtiUses + r.jtiUses }), { codes: 0, tokens: 0, macNonces: 0, sessions: 0, logoutDeliveries: 0, pushedRequests: 0, jtiUses: 0 });
    }

    it('two runs in one process delete each row once and both finish', async () => {
      await insertExpired();
      const purge = app.app.get(PurgeService);
      expect(total(await Promise.all([purge.purge(), purge.purge()]))).toEqual({ codes: ROWS, tokens: ROWS, macNonces: 0, sessions: 0, logoutDeliveries: 0, pushedRequests: 0, jtiUses: 0 });
      expect([await remainingCodes(), await remainingTokens()]).toEqual([[], []]);
    });

    it('two instances with their own connections delete each row once and both finish', async () => {
      await insertExpired();
      const other = await startInstance({ PURGE_INTERVAL_SECONDS: '0' });
      try {
        setTime(other.get(Clock), now);
        const results = await Promise.all([app.app.get(PurgeService).purge(), other.get(PurgeService).purge(), app.app.get(PurgeService).purge()]);
        expect(total(results)).toEqual({ codes: ROWS, tokens: ROWS, macNonces: 0, sessions: 0, logoutDeliveries: 0, pushedRequests: 0, jtiUses: 0 });
        expect([await remainingCodes(), await remainingTokens()]).toEqual([[], []]);
      } finally {
        await other.close();
      }
    });
  });

  it('stops a run after PURGE_MAX_BATCHES batches per table; the next run goes on', async () => {
    await insertCodes(Array.from({ length: 10 }, (_, i) => -GRACE_SECONDS - 1 - i));
    const other = await startInstance({ PURGE_INTERVAL_SECONDS: '0', PURGE_MAX_BATCHES: '2' });
    try {
      setTime(other.get(Clock), now);
      expect(await other.get(PurgeService).purge()).toEqual({ codes: 2 * BATCH_SIZE, tokens: 0, macNonces: 0, sessions: 0, logoutDeliveries: 0, pushedRequests: 0, jtiUses: 0 });
      expect(await other.get(PurgeService).purge()).toEqual({ codes: 10 - 2 * BATCH_SIZE, tokens: 0, macNonces: 0, sessions: 0, logoutDeliveries: 0, pushedRequests: 0, jtiUses: 0 });
    } finally {
      await other.close();
    }
  });

  describe(PurgeScheduler.name, () => {
    it('never starts a run while the previous one is still going', async () => {
      const purge = jest.spyOn(app.app.get(PurgeService), 'purge');
      let finish!: (result: PurgeResult) => void;
      purge.mockResolvedValue({ codes: 0, tokens: 0, macNonces: 0, sessions: 0, logoutDeliveries: 0, pushedRequests: 0, jtiUses: 0 }).mockReturnValueOnce(new Promise((resolve) => (finish = resolve)));
      const scheduler = app.app.get(PurgeScheduler);
      scheduler.tick();
      scheduler.tick();
      expect(purge).toHaveBeenCalledTimes(1);
      finish({ codes: 0, tokens: 0, macNonces: 0, sessions: 0, logoutDeliveries: 0, pushedRequests: 0, jtiUses: 0 });
      await new Promise((resolve) => setImmediate(resolve));
      scheduler.tick();
      expect(purge).toHaveBeenCalledTimes(2);
    });

    it('purges on its own every PURGE_INTERVAL_SECONDS', async () => {
      await insertCodes([-GRACE_SECONDS - 100]);
      const other = await startInstance({ PURGE_INTERVAL_SECONDS: '1' });
      try {
        // The first run comes within one interval (random jitter); generous deadline.
        const deadline = Date.now() + 15_000;
        while ((await remainingCodes()).length > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
        expect(await remainingCodes()).toEqual([]);
      } finally {
        await other.close();
      }
    });
  });

  describe('the CLI', () => {
    beforeAll(async () => {
      await promisify(execFile)('npm', ['run', '-s', 'build'], { cwd: PROJECT });
    }, 180_000);

    it('`purge` runs one purge and prints what it deleted as JSON', async () => {
      // The CLI's own clock is real: rows expired long ago, and live ones.
      await insertCodes([-86400, -86400 - 1]);
      await insertToken(TokenKind.Access, randomUUID(), -86400);
      const kept = await insertCodes([600]);
      const result = await runCli(['purge']);
      expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
      expect(JSON.parse(result.stdout)).toEqual({ codes: 2, tokens: 1, macNonces: 0, sessions: 0, logoutDeliveries: 0, pushedRequests: 0, jtiUses: 0 });
      expect(await remainingCodes()).toEqual(kept);
    });
  });
});
