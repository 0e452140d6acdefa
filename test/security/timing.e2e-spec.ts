/**
 * Threat: timing attacks on secret comparison (RFC 6819 §5.1.4.2.2 asks for secrets that cannot
 * be guessed; a comparison that answers faster the fewer leading characters match lets an attacker
 * guess one character at a time). Issue 7: secret, token and code comparisons must not leak a
 * prefix match.
 *
 * Why a prefix match cannot be faster here (src/common/secrets.ts): a presented secret is never
 * compared with a stored secret. It is first hashed with SHA-256, and then either
 *  - looked up by that hash (access and refresh tokens, codes: `WHERE token_hash = ?`), or
 *  - compared with the stored hash by constantTimeEqual, which hashes both sides again and calls
 *    crypto.timingSafeEqual on two 32-byte digests (client secrets).
 * SHA-256 takes the same time for any input of a given length, and a value sharing all but its
 * last character with the real one has a digest sharing nothing predictable with the real digest
 * (avalanche), so neither the index lookup nor the byte comparison can see "how close" a guess is.
 *
 * What these tests can and cannot detect, honestly:
 *  - The unit-level test times the comparison functions over hundreds of thousands of interleaved
 *    calls. It catches a comparison whose cost grows with the matching prefix by more than the
 *    margin (e.g. a character loop over long values, or work skipped on an early mismatch). A
 *    positive control runs the same harness on a deliberately leaky comparison, so the instrument
 *    is shown able to fail. It would NOT catch a naïve `===` on a stored clear 50-character secret:
 *    V8 compares such strings in a few nanoseconds, a difference far below the ±30 % margin
 *    (and only visible with millions of trials and a much tighter, flakier bound).
 *  - The HTTP-level tests compare median latencies of wrong values that share all but the last
 *    character with the real one against values sharing nothing, over hundreds of randomly
 *    interleaved requests. HTTP on a shared CI machine has a jitter of tens to hundreds of
 *    microseconds, so they detect only leaks of roughly a quarter of a request's time or more:
 *    extra database work, a slow hash, or a cache hit depending on the prefix. They cannot see
 *    nanosecond-scale leaks; the unit test and the code's structure (hash first) cover those.
 * The margins are wide on purpose so the tests do not flap; if noise ever breaks one, widen it.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { constantTimeEqual, generateSecret, hashSecret, SECRET_PREFIX, secretMatchesHash } from '../../src/common/secrets.js';
import { obtainAccessToken } from '../helpers/api-client.js';
import { basicAuth, obtainCode, postToken } from '../helpers/oauth-flow.js';
import { TestApp, type RegisteredClient, type TestUser } from '../helpers/test-app.js';

const UNIT_ROUNDS = 500;
const UNIT_BATCH = 200;
const UNIT_MARGIN = { min: 0.7, max: 1.4 };
const HTTP_TRIALS = 300;
const HTTP_WARMUP = 40;
const HTTP_MARGIN = { min: 0.75, max: 1.33 };
/** Each timing test runs for tens of seconds on a busy 2-core machine. */
const TIMEOUT_MS = 180_000;

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

const results: Record<string, unknown> = { database: process.env.TEST_DATABASE_URL ? 'postgres' : 'sqlite' };

/** The value with its last character changed: shares every character but one with the real one. */
function allButLast(value: string): string {
  return value.slice(0, -1) + (value.endsWith('A') ? 'B' : 'A');
}

/** A value of the same length sharing no character position with the real one (the prefix included). */
function sharingNothing(value: string): string {
  return [...value].map((c) => ALPHABET[(ALPHABET.indexOf(c) + 17 + ALPHABET.length) % ALPHABET.length] ?? 'Z').join('');
}

function randomOfLength(length: number): string {
  return Array.from({ length }, () => ALPHABET[Math.floor(Math.random() * ALPHABET.length)]).join('');
}

/** The q-quantile (0.5: the median), interpolated. */
function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (sorted.length - 1) * q;
  const below = Math.floor(at);
  return sorted[below] + (sorted[Math.min(below + 1, sorted.length - 1)] - sorted[below]) * (at - below);
}

function median(values: number[]): number {
  return quantile(values, 0.5);
}

function shuffle<T>(values: T[]): T[] {
  for (let i = values.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [values[i], values[j]] = [values[j], values[i]];
  }
  return values;
}

interface UnitTiming {
  /** Median over the batches of the ns per call. */
  median: Record<string, number>;
  /** Lower quartile over the batches: the cost with the least interference from other processes on a shared machine. */
  lowerQuartile: Record<string, number>;
}

/**
 * Times `compare(candidate)` for each candidate in rounds of `batch` calls, the candidates in a
 * fresh random order each round (so drift, GC and other processes hit all alike).
 */
function timePerCall(candidates: Record<string, string>, compare: (candidate: string) => boolean, rounds = UNIT_ROUNDS, batch = UNIT_BATCH): UnitTiming {
  const samples: Record<string, number[]> = Object.fromEntries(Object.keys(candidates).map((name) => [name, []]));
  let sink = 0;
  for (let round = -5; round < rounds; round++) {
    for (const name of shuffle(Object.keys(candidates))) {
      const candidate = candidates[name];
      const start = process.hrtime.bigint();
      for (let i = 0; i < batch; i++) if (compare(candidate)) sink++;
      const elapsed = Number(process.hrtime.bigint() - start) / batch;
      if (round >= 0) samples[name].push(elapsed);
    }
  }
  if (sink < 0) throw new Error('unreachable: keeps the calls from being optimised away');
  const summarise = (q: number) => Object.fromEntries(Object.entries(samples).map(([name, values]) => [name, Math.round(quantile(values, q))]));
  return { median: summarise(0.5), lowerQuartile: summarise(0.25) };
}

function expectWithin(ratio: number, margin: { min: number; max: number }): void {
  expect(ratio).toBeGreaterThanOrEqual(margin.min);
  expect(ratio).toBeLessThanOrEqual(margin.max);
}

describe('timing of secret, token and code comparisons (issue 7; RFC 6819 §5.1.4.2.2)', () => {
  afterAll(() => {
    const directory = join(process.cwd(), 'test-results');
    mkdirSync(directory, { recursive: true });
    writeFileSync(join(directory, `timing-${String(results.database)}.json`), `${JSON.stringify(results, null, 2)}\n`);
  });

  describe('unit level: src/common/secrets.ts', () => {
    const real = generateSecret(SECRET_PREFIX.clientSecret);
    const stored = hashSecret(real);
    const candidates = { prefix: allButLast(real), nothing: sharingNothing(real), random: SECRET_PREFIX.clientSecret + randomOfLength(real.length - SECRET_PREFIX.clientSecret.length) };

    it('takes as long for a secret sharing all but one character as for one sharing nothing (secretMatchesHash)', () => {
      expect(secretMatchesHash(real, stored)).toBe(true);
      for (const candidate of Object.values(candidates)) expect(secretMatchesHash(candidate, stored)).toBe(false);
      const timing = timePerCall(candidates, (candidate) => secretMatchesHash(candidate, stored));
      const ns = timing.lowerQuartile;
      const ratios = { prefixOverNothing: ns.prefix / ns.nothing, prefixOverRandom: ns.prefix / ns.random, randomOverNothing: ns.random / ns.nothing };
      results.secretMatchesHash = { nsPerCall: timing, ratios, calls: UNIT_ROUNDS * UNIT_BATCH * 3 };
      console.log('secretMatchesHash ns/call', timing, ratios);
      for (const ratio of Object.values(ratios)) expectWithin(ratio, UNIT_MARGIN);
    }, TIMEOUT_MS);

    it('takes as long for a stored digest matching all but its last hex digit as for one matching none (constantTimeEqual)', () => {
      const digest = stored;
      const digests = { prefix: digest.slice(0, -1) + (digest.endsWith('0') ? '1' : '0'), nothing: [...digest].map((c) => ((parseInt(c, 16) + 8) % 16).toString(16)).join(''), equal: digest };
      const timing = timePerCall(digests, (candidate) => constantTimeEqual(candidate, digest));
      const ns = timing.lowerQuartile;
      const ratios = { prefixOverNothing: ns.prefix / ns.nothing, equalOverNothing: ns.equal / ns.nothing };
      results.constantTimeEqual = { nsPerCall: timing, ratios, calls: UNIT_ROUNDS * UNIT_BATCH * 3 };
      console.log('constantTimeEqual ns/call', timing, ratios);
      for (const ratio of Object.values(ratios)) expectWithin(ratio, UNIT_MARGIN);
    }, TIMEOUT_MS);

    it('positive control: the same harness flags a leaky character-by-character comparison', () => {
      // An early-exit loop over long values: the leak these tests exist to catch, made big enough to see.
      const long = randomOfLength(20_000);
      const leaky = (candidate: string) => {
        if (candidate.length !== long.length) return false;
        for (let i = 0; i < long.length; i++) if (candidate.charCodeAt(i) !== long.charCodeAt(i)) return false;
        return true;
      };
      const timing = timePerCall({ prefix: allButLast(long), nothing: sharingNothing(long) }, leaky, 30, 50);
      const ratio = timing.lowerQuartile.prefix / timing.lowerQuartile.nothing;
      results.leakyControl = { nsPerCall: timing, ratio };
      console.log('leaky control ns/call', timing, ratio);
      expect(ratio).toBeGreaterThan(UNIT_MARGIN.max * 3);
    }, TIMEOUT_MS);
  });

  describe('HTTP level: /token and /api/v1', () => {
    let app: TestApp;
    let client: Required<RegisteredClient>;
    let user: TestUser;

    beforeAll(async () => {
      // 0 turns the per-client and per-token limits off: the trials must all reach the comparison.
      app = await TestApp.start({ RATE_LIMIT_CLIENT_PER_MINUTE: '0', RATE_LIMIT_API_PER_MINUTE: '0' });
      const created = await app.createClient({ scope: 'notes:read', grantTypes: ['authorization_code', 'refresh_token', 'client_credentials'] });
      client = { ...created, clientSecret: created.clientSecret! };
      user = await app.createUser();
    });
    afterAll(async () => app?.stop());

    /**
     * Sends HTTP_WARMUP then HTTP_TRIALS pairs of requests, one request at a time, each pair one of
     * each kind in random order, and compares their latencies: the overall medians, and the median
     * of the ratios within pairs (each pair sees the same load on the machine, so a burst of other
     * work slows both of its requests, not one kind).
     */
    async function compareLatencies(name: string, send: (kind: 'prefix' | 'nothing') => Promise<number>): Promise<number> {
      const pair = () => shuffle<'prefix' | 'nothing'>(['prefix', 'nothing']);
      for (let i = 0; i < HTTP_WARMUP; i++) for (const kind of pair()) await send(kind);
      const samples = { prefix: [] as number[], nothing: [] as number[] };
      const pairRatios: number[] = [];
      for (let i = 0; i < HTTP_TRIALS; i++) {
        const ms = { prefix: 0, nothing: 0 };
        for (const kind of pair()) {
          const start = performance.now();
          const status = await send(kind);
          ms[kind] = performance.now() - start;
          expect(status).toBeLessThan(500);
        }
        samples.prefix.push(ms.prefix);
        samples.nothing.push(ms.nothing);
        pairRatios.push(ms.prefix / ms.nothing);
      }
      const summary = {
        trialsEach: HTTP_TRIALS,
        medianMs: { prefix: median(samples.prefix), nothing: median(samples.nothing) },
        overallRatio: median(samples.prefix) / median(samples.nothing),
        medianPairRatio: median(pairRatios),
      };
      results[name] = summary;
      console.log(name, summary);
      return summary.medianPairRatio;
    }

    it('a client secret at /token (Basic): all-but-last-character and sharing-nothing are refused alike in time', async () => {
      const wrong = { prefix: allButLast(client.clientSecret), nothing: sharingNothing(client.clientSecret) };
      const ratio = await compareLatencies('clientSecretAtToken', async (kind) => {
        const reply = await postToken(app, { grant_type: 'client_credentials' }, { authorization: basicAuth(client.clientId, wrong[kind]) });
        expect(reply.status).toBe(401);
        return reply.status;
      });
      expectWithin(ratio, HTTP_MARGIN);
    }, TIMEOUT_MS);

    it('an access token at /api/v1: all-but-last-character and sharing-nothing are refused alike in time', async () => {
      const token = await obtainAccessToken(app, client, user, 'notes:read');
      expect((await fetch(app.url('/api/v1/notes'), { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
      const wrong = { prefix: allButLast(token), nothing: sharingNothing(token) };
      const ratio = await compareLatencies('accessTokenAtApi', async (kind) => {
        const response = await fetch(app.url('/api/v1/notes'), { headers: { authorization: `Bearer ${wrong[kind]}` } });
        await response.arrayBuffer();
        expect(response.status).toBe(401);
        return response.status;
      });
      expectWithin(ratio, HTTP_MARGIN);
    }, TIMEOUT_MS);

    it('an authorization code at /token: all-but-last-character and sharing-nothing are refused alike in time', async () => {
      // The real code stays unredeemed and valid throughout: only near misses are sent.
      const { code, pkce } = await obtainCode(app, client, user);
      const wrong = { prefix: allButLast(code), nothing: sharingNothing(code) };
      const ratio = await compareLatencies('codeAtToken', async (kind) => {
        const reply = await postToken(
          app,
          { grant_type: 'authorization_code', code: wrong[kind], redirect_uri: client.redirectUri, code_verifier: pkce.verifier },
          { authorization: basicAuth(client.clientId, client.clientSecret) },
        );
        expect(`${reply.status} ${String(reply.body.error)}`).toBe('400 invalid_grant');
        return reply.status;
      });
      expectWithin(ratio, HTTP_MARGIN);
      // And the real code still works: the near misses neither consumed nor revoked it.
      const redeemed = await postToken(
        app,
        { grant_type: 'authorization_code', code, redirect_uri: client.redirectUri, code_verifier: pkce.verifier },
        { authorization: basicAuth(client.clientId, client.clientSecret) },
      );
      expect(redeemed.status).toBe(200);
    }, TIMEOUT_MS);
  });
});
