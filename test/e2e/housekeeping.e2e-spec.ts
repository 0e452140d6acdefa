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
    expect(await app.app.get(PurgeService).purge()).toEqual({ codes: expired.length, tokens: 0, macNonces: 0, sessions: 0, logoutDeliveries: 0, pushedRequests: 0, jtiUses: 0, idempotencyKeys: 0, deviceAuthorizations: 0, emailLinks: 0, instances: 0 });
    expect(await remainingCodes()).toEqual(kept.sort());
    expect(await app.app.get(PurgeService).purge()).toEqual({ codes: 0, tokens: 0, macNonces: 0, sessions: 0, logoutDeliveries: 0, pushedRequests: 0, jtiUses: 0, idempotencyKeys: 0, deviceAuthorizations: 0, emailLinks: 0, instances: 0 });
  });

  it('deletes expired tokens, access and refresh, rotated or not, whatever their family; keeps what has not expired or is within the grace period', async () => {
    const expired = -GRACE_SECONDS - 1;
    // A family that is over: its last refresh token has expired.
    const over = randomUUID();
    const gone = [
      await insertToken(TokenKind.Access, over, -REFRESH_TTL),
      await insertToken(TokenKind.Refresh, over, -REFRESH_TTL, { consumed: true }),
      await insertToken(TokenKind.Refresh, over, expired),
    ];
    // A family still being refreshed: its rotated refresh token and access token have expired and
    // go (RFC 9700 §4.14.2 reuse detection needs a rotated token only while it could have been used);
    // the current ones stay.
    const live = randomUUID();
    gone.push(await insertToken(TokenKind.Access, live, expired), await insertToken(TokenKind.Refresh, live, expired, { consumed: true }));
    const kept = [
      await insertToken(TokenKind.Refresh, live, REFRESH_TTL - 60, { consumed: true }),
      await insertToken(TokenKind.Refresh, live, REFRESH_TTL),
      await insertToken(TokenKind.Access, live, ACCESS_TTL),
    ];
    // Revoked tokens go when they have expired, not before.
    const revoked = randomUUID();
    gone.push(await insertToken(TokenKind.Refresh, revoked, expired, { revoked: true }), await insertToken(TokenKind.Access, revoked, expired, { revoked: true }));
    kept.push(await insertToken(TokenKind.Refresh, revoked, 100, { revoked: true }));
    // A client_credentials family: access tokens only. Within the grace period is kept.
    const service = randomUUID();
    gone.push(await insertToken(TokenKind.Access, service, expired));
    kept.push(await insertToken(TokenKind.Access, service, -GRACE_SECONDS + 5));
    // A refresh token that expired within the grace period is kept, rotated or not.
    const recent = randomUUID();
    kept.push(await insertToken(TokenKind.Refresh, recent, -GRACE_SECONDS + 5, { consumed: true }), await insertToken(TokenKind.Refresh, recent, -10));

    expect(await app.app.get(PurgeService).purge()).toEqual({ codes: 0, tokens: gone.length, macNonces: 0, sessions: 0, logoutDeliveries: 0, pushedRequests: 0, jtiUses: 0, idempotencyKeys: 0, deviceAuthorizations: 0, emailLinks: 0, instances: 0 });
    expect(await remainingTokens()).toEqual(kept.sort());
  });

  it('refresh-token reuse is detected for as long as the rotated token could have been used, also after the purge took what had expired', async () => {
    const tokens = await obtainTokens(app, client, user, 'notes:read');
    const first = tokens.refreshToken!;
    // Rotate at once, then rotate the second token half a refresh lifetime later.
    const rotated = await tokenRequest(app, client, { grant_type: 'refresh_token', refresh_token: first });
    expect(rotated.status).toBe(200);
    const second = String(rotated.body.refresh_token);
    setTime(app.clock, at(REFRESH_TTL / 2));
    const again = await tokenRequest(app, client, { grant_type: 'refresh_token', refresh_token: second });
    expect(again.status).toBe(200);
    const third = String(again.body.refresh_token);

    // Past every access token's expiry (and the grace): the code and the three access tokens go;
    // the three refresh tokens, none of them expired, stay.
    setTime(app.clock, at(REFRESH_TTL / 2 + ACCESS_TTL + GRACE_SECONDS + 10));
    expect(await app.app.get(PurgeService).purge()).toMatchObject({ codes: 1, tokens: 3 });
    expect((await app.dataSource.getRepository(Token).find()).filter((token) => token.kind === TokenKind.Refresh)).toHaveLength(3);

    // The first refresh token, rotated long ago but not yet expired, presented again: reuse, and the family is revoked.
    expect((await tokenRequest(app, client, { grant_type: 'refresh_token', refresh_token: first })).body.error).toBe('invalid_grant');
    expect((await tokenRequest(app, client, { grant_type: 'refresh_token', refresh_token: third })).body.error).toBe('invalid_grant');
    expect((await app.dataSource.getRepository(Token).find()).every((token) => token.revokedAt !== null)).toBe(true);
  });

  it('a family that keeps rotating keeps only the rotated refresh tokens that have not expired: its rows do not grow with its age', async () => {
    const tokens = await obtainTokens(app, client, user, 'notes:read');
    let current = tokens.refreshToken!;
    const rotations = 6;
    // One rotation every third of the refresh lifetime: after the first three, each purge takes one rotated token.
    for (let i = 1; i <= rotations; i++) {
      setTime(app.clock, at((i * REFRESH_TTL) / 3));
      const response = await tokenRequest(app, client, { grant_type: 'refresh_token', refresh_token: current });
      expect(response.status).toBe(200);
      current = String(response.body.refresh_token);
      await app.app.get(PurgeService).purge();
    }
    const refresh = (await app.dataSource.getRepository(Token).find()).filter((token) => token.kind === TokenKind.Refresh);
    // The current token and the rotated ones issued within the last refresh lifetime (plus the grace): four of seven.
    expect(refresh.length).toBeLessThanOrEqual(4);
    expect(refresh.every((token) => token.expiresAt.getTime() >= app.clock.now().getTime() - GRACE_SECONDS * 1000)).toBe(true);
    // The chain still works.
    expect((await tokenRequest(app, client, { grant_type: 'refresh_token', refresh_token: current })).status).toBe(200);
  });

  describe('concurrent purges', () => {
    const ROWS = 30;

    async function insertExpired(): Promise<void> {
      await insertCodes(Array.from({ length: ROWS }, (_, i) => -GRACE_SECONDS - 1 - i));
      for (let i = 0; i < ROWS; i++) await insertToken(TokenKind.Access, randomUUID(), -GRACE_SECONDS - 1 - i);
    }

    function total(results: PurgeResult[]): PurgeResult {
      return results.reduce((sum, r) => ({ codes: sum.codes + r.codes, tokens: sum.tokens + r.tokens, macNonces: sum.macNonces + r.macNonces, sessions: sum.sessions + r.sessions, logoutDeliveries: sum.logoutDeliveries + r.logoutDeliveries, pushedRequests: sum.pushedRequests + r.pushedRequests, jtiUses: sum.jtiUses + r.jtiUses, idempotencyKeys: sum.idempotencyKeys + r.idempotencyKeys, deviceAuthorizations: sum.deviceAuthorizations + r.deviceAuthorizations, emailLinks: sum.emailLinks + r.emailLinks, instances: sum.instances + r.instances }), { codes: 0, tokens: 0, macNonces: 0, sessions: 0, logoutDeliveries: 0, pushedRequests: 0, jtiUses: 0, idempotencyKeys: 0, deviceAuthorizations: 0, emailLinks: 0, instances: 0 });
    }

    it('two runs in one process delete each row once and both finish', async () => {
      await insertExpired();
      const purge = app.app.get(PurgeService);
      expect(total(await Promise.all([purge.purge(), purge.purge()]))).toEqual({ codes: ROWS, tokens: ROWS, macNonces: 0, sessions: 0, logoutDeliveries: 0, pushedRequests: 0, jtiUses: 0, idempotencyKeys: 0, deviceAuthorizations: 0, emailLinks: 0, instances: 0 });
      expect([await remainingCodes(), await remainingTokens()]).toEqual([[], []]);
    });

    it('two instances with their own connections delete each row once and both finish', async () => {
      await insertExpired();
      const other = await startInstance({ PURGE_INTERVAL_SECONDS: '0' });
      try {
        setTime(other.get(Clock), now);
        const results = await Promise.all([app.app.get(PurgeService).purge(), other.get(PurgeService).purge(), app.app.get(PurgeService).purge()]);
        expect(total(results)).toEqual({ codes: ROWS, tokens: ROWS, macNonces: 0, sessions: 0, logoutDeliveries: 0, pushedRequests: 0, jtiUses: 0, idempotencyKeys: 0, deviceAuthorizations: 0, emailLinks: 0, instances: 0 });
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
      expect(await other.get(PurgeService).purge()).toEqual({ codes: 2 * BATCH_SIZE, tokens: 0, macNonces: 0, sessions: 0, logoutDeliveries: 0, pushedRequests: 0, jtiUses: 0, idempotencyKeys: 0, deviceAuthorizations: 0, emailLinks: 0, instances: 0 });
      expect(await other.get(PurgeService).purge()).toEqual({ codes: 10 - 2 * BATCH_SIZE, tokens: 0, macNonces: 0, sessions: 0, logoutDeliveries: 0, pushedRequests: 0, jtiUses: 0, idempotencyKeys: 0, deviceAuthorizations: 0, emailLinks: 0, instances: 0 });
    } finally {
      await other.close();
    }
  });

  describe(PurgeScheduler.name, () => {
    it('never starts a run while the previous one is still going', async () => {
      const purge = jest.spyOn(app.app.get(PurgeService), 'purge');
      let finish!: (result: PurgeResult) => void;
      purge.mockResolvedValue({ codes: 0, tokens: 0, macNonces: 0, sessions: 0, logoutDeliveries: 0, pushedRequests: 0, jtiUses: 0, idempotencyKeys: 0, deviceAuthorizations: 0, emailLinks: 0, instances: 0 }).mockReturnValueOnce(new Promise((resolve) => (finish = resolve)));
      const scheduler = app.app.get(PurgeScheduler);
      scheduler.tick();
      scheduler.tick();
      expect(purge).toHaveBeenCalledTimes(1);
      finish({ codes: 0, tokens: 0, macNonces: 0, sessions: 0, logoutDeliveries: 0, pushedRequests: 0, jtiUses: 0, idempotencyKeys: 0, deviceAuthorizations: 0, emailLinks: 0, instances: 0 });
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
      expect(JSON.parse(result.stdout)).toEqual({ codes: 2, tokens: 1, macNonces: 0, sessions: 0, logoutDeliveries: 0, pushedRequests: 0, jtiUses: 0, idempotencyKeys: 0, deviceAuthorizations: 0, emailLinks: 0, instances: 0 });
      expect(await remainingCodes()).toEqual(kept);
    });
  });
});
