/**
 * Single use under concurrency: two instances of Latchkey on one database (as behind a load
 * balancer) receive the same authorization code, or the same refresh token, many times at the same
 * instant. Exactly one request may win (RFC 6749 §4.1.2, §10.5; RFC 9700 §4.14.2).
 */
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { getDataSourceToken } from '@nestjs/typeorm';
import { createHash } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { placeholders } from '../../src/database/prepared-statement.js';
import { basicAuth, obtainCode, tokenRequest } from '../helpers/oauth-flow.js';
import { TestApp, type RegisteredClient, type TestUser } from '../helpers/test-app.js';
import { watchTransactionStatements, type TransactionStatement } from '../helpers/transaction-statements.js';
import { startAnotherInstance } from '../helpers/app-at-issuer.js';

const CODE_REDEMPTIONS = 50;
const REFRESHES = 20;
const PARALLEL_GRANTS = 40;

interface TokenRow {
  id: string;
  kind: string;
  token_hash: string;
  consumed_at: unknown;
  revoked_at: unknown;
}

interface Outcome {
  status: number;
  body: Record<string, unknown>;
}

function sha256(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

async function postToken(baseUrl: string, client: RegisteredClient, params: Record<string, string>): Promise<Outcome> {
  const response = await fetch(`${baseUrl}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basicAuth(client.clientId, client.clientSecret!) },
    body: new URLSearchParams(params).toString(),
  });
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

/** Fires `count` identical requests at once, alternating between the instances. */
function burst(count: number, baseUrls: string[], send: (baseUrl: string) => Promise<Outcome>): Promise<Outcome[]> {
  return Promise.all(Array.from({ length: count }, (_, i) => send(baseUrls[i % baseUrls.length])));
}

/** Counts the outcomes by status and error code, e.g. { '200': 1, '400 invalid_grant': 49 }. */
function tally(outcomes: Outcome[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const { status, body } of outcomes) {
    const key = status === 200 ? '200' : `${status} ${String(body.error)}`;
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}

describe('single use under concurrency, across two instances on one database', () => {
  let app: TestApp;
  let second: NestFastifyApplication;
  let secondUrl: string;
  let instances: string[];
  let client: RegisteredClient;
  let user: TestUser;

  beforeAll(async () => {
    app = await TestApp.start();
    ({ nest: second, baseUrl: secondUrl } = await startAnotherInstance());
    instances = [app.baseUrl, secondUrl];
    client = await app.createClient();
    user = await app.createUser();
  });
  afterAll(async () => {
    await second?.close();
    await app?.stop();
  });

  /** The first query parameter, as each driver spells it. */
  function placeholder(): string {
    return app.dataSource.driver.options.type === 'postgres' ? '$1' : '?';
  }

  async function familyOf(code: string): Promise<{ codeId: string; consumed: boolean; tokens: TokenRow[] }> {
    const [row] = await app.dataSource.query<{ id: string; consumed_at: unknown }[]>(`SELECT id, consumed_at FROM authorization_codes WHERE code_hash = ${placeholder()}`, [sha256(code)]);
    return { codeId: row.id, consumed: row.consumed_at !== null, tokens: await tokensOfFamily(row.id) };
  }

  async function tokensOfFamily(familyId: string): Promise<TokenRow[]> {
    return app.dataSource.query<TokenRow[]>(`SELECT id, kind, token_hash, consumed_at, revoked_at FROM tokens WHERE family_id = ${placeholder()} ORDER BY kind`, [familyId]);
  }

  async function apiStatus(baseUrl: string, accessToken: string): Promise<number> {
    return (await fetch(`${baseUrl}/api/v1/notes`, { headers: { authorization: `Bearer ${accessToken}` } })).status;
  }

  describe('the two instances', () => {
    it('are separate applications with their own database connections', () => {
      expect(secondUrl).not.toBe(app.baseUrl);
      expect(second.get<DataSource>(getDataSourceToken())).not.toBe(app.dataSource);
    });

    it('share one database: a code issued by one is redeemed at the other', async () => {
      const { code, pkce } = await obtainCode(app, client, user);
      const result = await postToken(secondUrl, client, { grant_type: 'authorization_code', code, redirect_uri: client.redirectUri, code_verifier: pkce.verifier });
      expect(result.status).toBe(200);
      expect(await apiStatus(app.baseUrl, String(result.body.access_token))).toBe(200);
    });
  });

  describe(`${CODE_REDEMPTIONS} simultaneous redemptions of one authorization code`, () => {
    let code: string;
    let outcomes: Outcome[];

    beforeAll(async () => {
      const obtained = await obtainCode(app, client, user);
      code = obtained.code;
      const params = { grant_type: 'authorization_code', code, redirect_uri: client.redirectUri, code_verifier: obtained.pkce.verifier };
      outcomes = await burst(CODE_REDEMPTIONS, instances, (baseUrl) => postToken(baseUrl, client, params));
    });

    it('issue tokens exactly once; every other attempt gets invalid_grant (RFC 6749 §4.1.2, §5.2)', () => {
      expect(tally(outcomes)).toEqual({ '200': 1, [`400 invalid_grant`]: CODE_REDEMPTIONS - 1 });
    });

    it('store exactly one access token and one refresh token for the code', async () => {
      const { consumed, tokens } = await familyOf(code);
      expect(consumed).toBe(true);
      expect(tokens.map((t) => t.kind)).toEqual(['access', 'refresh']);
      const winner = outcomes.find((o) => o.status === 200)!;
      expect(tokens.find((t) => t.kind === 'access')!.token_hash).toBe(sha256(String(winner.body.access_token)));
      expect(tokens.find((t) => t.kind === 'refresh')!.token_hash).toBe(sha256(String(winner.body.refresh_token)));
    });

    it('revoke what the code issued, because the code was used more than once (RFC 6749 §4.1.2)', async () => {
      const { tokens } = await familyOf(code);
      for (const token of tokens) expect({ kind: token.kind, revoked: token.revoked_at !== null }).toEqual({ kind: token.kind, revoked: true });
      const winner = outcomes.find((o) => o.status === 200)!;
      for (const baseUrl of instances) expect(await apiStatus(baseUrl, String(winner.body.access_token))).toBe(401);
      const refresh = await postToken(secondUrl, client, { grant_type: 'refresh_token', refresh_token: String(winner.body.refresh_token) });
      expect(refresh).toEqual({ status: 400, body: expect.objectContaining({ error: 'invalid_grant' }) });
    });
  });

  describe('one code sent to both instances at the same instant', () => {
    it.each([1, 2, 3, 4, 5])('issues exactly one token (round %i)', async () => {
      const { code, pkce } = await obtainCode(app, client, user);
      const params = { grant_type: 'authorization_code', code, redirect_uri: client.redirectUri, code_verifier: pkce.verifier };
      const outcomes = await burst(2, instances, (baseUrl) => postToken(baseUrl, client, params));
      expect(tally(outcomes)).toEqual({ '200': 1, '400 invalid_grant': 1 });
      const { tokens } = await familyOf(code);
      expect(tokens.filter((t) => t.kind === 'access')).toHaveLength(1);
    });
  });

  describe(`${REFRESHES} simultaneous refreshes with one refresh token (RFC 9700 §4.14.2)`, () => {
    let familyId: string;
    let first: Record<string, unknown>;
    let outcomes: Outcome[];

    beforeAll(async () => {
      const { code, pkce } = await obtainCode(app, client, user);
      const issued = await tokenRequest(app, client, { grant_type: 'authorization_code', code, redirect_uri: client.redirectUri, code_verifier: pkce.verifier });
      if (issued.status !== 200) throw new Error(`Token request failed with ${issued.status}: ${JSON.stringify(issued.body)}`);
      first = issued.body;
      familyId = (await familyOf(code)).codeId;
      outcomes = await burst(REFRESHES, instances, (baseUrl) => postToken(baseUrl, client, { grant_type: 'refresh_token', refresh_token: String(first.refresh_token) }));
    });

    it('rotate the token exactly once; every other attempt gets invalid_grant', () => {
      expect(tally(outcomes)).toEqual({ '200': 1, '400 invalid_grant': REFRESHES - 1 });
    });

    it('store exactly one new access token and one new refresh token', async () => {
      const tokens = await tokensOfFamily(familyId);
      expect(tokens.filter((t) => t.kind === 'access')).toHaveLength(2);
      expect(tokens.filter((t) => t.kind === 'refresh')).toHaveLength(2);
      const winner = outcomes.find((o) => o.status === 200)!;
      const hashes = tokens.map((t) => t.token_hash);
      expect(hashes).toContain(sha256(String(winner.body.access_token)));
      expect(hashes).toContain(sha256(String(winner.body.refresh_token)));
      const original = tokens.find((t) => t.token_hash === sha256(String(first.refresh_token)))!;
      expect(original.consumed_at).not.toBeNull();
    });

    it('treat the losers as reuse of a rotated token and revoke the whole family, the new tokens included', async () => {
      const tokens = await tokensOfFamily(familyId);
      expect(tokens.filter((t) => t.revoked_at === null)).toEqual([]);
      const winner = outcomes.find((o) => o.status === 200)!;
      for (const baseUrl of instances) expect(await apiStatus(baseUrl, String(winner.body.access_token))).toBe(401);
      const again = await postToken(app.baseUrl, client, { grant_type: 'refresh_token', refresh_token: String(winner.body.refresh_token) });
      expect(again).toEqual({ status: 400, body: expect.objectContaining({ error: 'invalid_grant' }) });
    });
  });

  /**
   * Transactions must never nest. On SQLite every query shares one connection, and TypeORM turns a
   * transaction started while another is open into a SAVEPOINT inside it: the two would then
   * commit, or roll back, together, outside the group commit's control. That cannot happen today
   * because better-sqlite3 is synchronous and Node runs a unit of work's microtasks to the end
   * before the next callback, so a transaction body never yields. This test keeps it that way: a
   * real await (I/O, a timer) inside a transaction would make it fail.
   */
  describe(`${PARALLEL_GRANTS} code redemptions, ${PARALLEL_GRANTS} refreshes and ${PARALLEL_GRANTS} client_credentials grants at once, on one instance`, () => {
    const statements: { runner: number; statement: TransactionStatement }[] = [];
    let outcomes: Outcome[];
    let clientCredentials: Outcome[];

    beforeAll(async () => {
      const codes: Awaited<ReturnType<typeof obtainCode>>[] = [];
      for (let i = 0; i < PARALLEL_GRANTS * 2; i++) codes.push(await obtainCode(app, client, user));
      const redeem = ({ code, pkce }: (typeof codes)[number]) => ({ grant_type: 'authorization_code', code, redirect_uri: client.redirectUri, code_verifier: pkce.verifier });
      const refreshTokens: string[] = [];
      for (const obtained of codes.slice(PARALLEL_GRANTS)) refreshTokens.push(String((await postToken(app.baseUrl, client, redeem(obtained))).body.refresh_token));

      const service = await app.createClient({ grantTypes: ['client_credentials'], scope: 'notes:read' });

      // Record the transaction statements of every query runner (connection) the app takes.
      const dataSource = app.dataSource;
      const createQueryRunner = dataSource.createQueryRunner.bind(dataSource);
      const watched = new Map<object, number>();
      dataSource.createQueryRunner = ((...args: Parameters<DataSource['createQueryRunner']>) => {
        const runner = createQueryRunner(...args);
        if (!watched.has(runner)) {
          const id = watched.size;
          watched.set(runner, id);
          watchTransactionStatements(runner, (statement) => statements.push({ runner: id, statement }));
        }
        return runner;
      }) as DataSource['createQueryRunner'];
      try {
        [outcomes, clientCredentials] = await Promise.all([
          Promise.all([
            ...codes.slice(0, PARALLEL_GRANTS).map((obtained) => postToken(app.baseUrl, client, redeem(obtained))),
            ...refreshTokens.map((token) => postToken(app.baseUrl, client, { grant_type: 'refresh_token', refresh_token: token })),
          ]),
          Promise.all(Array.from({ length: PARALLEL_GRANTS }, () => postToken(app.baseUrl, service, { grant_type: 'client_credentials' }))),
        ]);
      } finally {
        dataSource.createQueryRunner = createQueryRunner;
      }
    });

    it('all succeed', () => {
      expect(tally(outcomes)).toEqual({ '200': PARALLEL_GRANTS * 2 });
      expect(tally(clientCredentials)).toEqual({ '200': PARALLEL_GRANTS });
    });

    it('store every token they answered with, by the time they answered (SQLite: in a shared group commit)', async () => {
      const hashes = clientCredentials.map(({ body }) => sha256(String(body.access_token)));
      const sql = placeholders(`SELECT COUNT(*) AS n FROM tokens WHERE token_hash IN (${hashes.map(() => '?').join(', ')})`, app.dataSource.options.type);
      const rows = await app.dataSource.query<{ n: number | string }[]>(sql, hashes);
      expect(Number(rows[0].n)).toBe(PARALLEL_GRANTS);
    });

    it('never nest: on each connection BEGIN and COMMIT alternate, with no SAVEPOINT', () => {
      expect(statements.filter(({ statement }) => statement === 'SAVEPOINT')).toEqual([]);
      const perRunner = new Map<number, string[]>();
      for (const { runner, statement } of statements) perRunner.set(runner, [...(perRunner.get(runner) ?? []), statement]);
      let transactions = 0;
      for (const sequence of perRunner.values()) {
        expect(sequence.join(' ')).toMatch(/^(BEGIN COMMIT ?)+$/);
        transactions += sequence.length / 2;
      }
      if (app.dataSource.options.type === 'postgres') {
        // None: a code redemption and a refresh rotation are one statement each (a conditional UPDATE
        // gating the INSERT, TokenStore.insertAfter), the client_credentials INSERTs autocommit.
        expect(transactions).toBe(0);
      } else {
        // The group commits of this turn of the event loop's writes: at most one per grant.
        expect(transactions).toBeGreaterThanOrEqual(1);
        expect(transactions).toBeLessThanOrEqual(PARALLEL_GRANTS * 3);
      }
    });
  });
});
