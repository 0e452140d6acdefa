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
 * How a test decides (support/statistics.ts): each test collects two samples of durations, a value
 * sharing all but the last character with the real one and a value sharing nothing, randomly
 * interleaved so that drift, garbage collection and other processes hit both alike. It compares
 * the two distributions with a two-sided Mann–Whitney U test and estimates the difference by the
 * Hodges–Lehmann shift relative to the baseline's median. A leak is a difference that is BOTH
 * significant (p < 0.001) AND large (a shift of more than UNIT_LEAK / HTTP_LEAK of the median):
 * with hundreds of samples a difference of a percent is significant and still useless to an
 * attacker, and a large difference on a few noisy samples is not significant. A measurement that
 * shows a leak is repeated with fresh samples, up to MAX_ATTEMPTS in all, and the test fails only
 * if every attempt shows one: a busy machine makes one-off outliers, a real leak repeats. The
 * p-values, shifts and ratios of every attempt go to test-results/timing-<database>.json.
 *
 * What these tests can and cannot detect, honestly:
 *  - The unit-level tests time the comparison functions over hundreds of thousands of interleaved
 *    calls (300 batches of 200 per value). They catch a comparison whose cost grows with the
 *    matching prefix by more than UNIT_LEAK (e.g. a character loop over long values, or work
 *    skipped on an early mismatch). A positive control runs the same harness and the same decision
 *    rule on a deliberately leaky comparison, which must be flagged on every attempt, so the
 *    instrument is shown able to fail. They would NOT catch a naïve `===` on a stored clear
 *    50-character secret: V8 compares such strings in a few nanoseconds, well under UNIT_LEAK of a
 *    call that hashes (the test may well find it significant; it is not large).
 *  - The HTTP-level tests compare the latencies of the two wrong values over hundreds of
 *    interleaved requests. HTTP on a shared CI machine has a jitter of tens to hundreds of
 *    microseconds; the rank test is not thrown by the slow tail, but only a shift above HTTP_LEAK
 *    of a request's time counts: extra database work, a slow hash, or a cache hit depending on the
 *    prefix. They cannot see nanosecond-scale leaks; the unit tests and the code's structure (hash
 *    first) cover those.
 *  - The U test assumes independent samples. Requests taken in pairs under the same load are
 *    positively correlated, which tends to make the test conservative (a leak has to be a little
 *    larger to reach p < 0.001), not flakier. It looks at the whole distributions, and the shift
 *    at their middle: a leak that slows only a few calls in a hundred (only on a cold cache, say)
 *    hardly moves the ranks, and one that comes and goes can pass on a retry. A difference that is
 *    real but constant (the two values differing in something other than the prefix) repeats and
 *    fails the test: that is meant, an attacker could observe it too.
 * If noise ever fails a test on all attempts, look at the attempts in the results file before
 * raising a threshold: a difference that repeats three times is more likely real than noise.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { constantTimeEqual, generateSecret, hashSecret, SECRET_PREFIX, secretMatchesHash } from '../../src/common/secrets.js';
import { obtainAccessToken } from '../helpers/api-client.js';
import { basicAuth, obtainCode, postToken } from '../helpers/oauth-flow.js';
import { TestApp, type RegisteredClient, type TestUser } from '../helpers/test-app.js';
import { compareTimings, median, quantile, type LeakCriteria, type TimingComparison } from './support/statistics.js';

/** Batches per value: the U test and the Hodges–Lehmann shift on 300 batches resolve well under 1 %, far below UNIT_LEAK. */
const UNIT_ROUNDS = 300;
const UNIT_BATCH = 200;
/**
 * A leak at unit level: p < 0.001 and a shift of more than 5 % of a call. Interleaved batches of a
 * pure function shift each other by well under 1 % when nothing leaks, so 5 % is far from the noise
 * and still a fraction of one SHA-256 of a short string.
 */
const UNIT_LEAK: LeakCriteria = { alpha: 0.001, minRelativeEffect: 0.05 };
const HTTP_TRIALS = 300;
const HTTP_WARMUP = 40;
/**
 * A leak at HTTP level: p < 0.001 and a shift of more than 10 % of a request. On a shared machine
 * the shift between two alike kinds of request wanders by several percent from run to run; 10 % is
 * clear of that and still catches the leaks HTTP can show at all (an extra query, a slow hash).
 */
const HTTP_LEAK: LeakCriteria = { alpha: 0.001, minRelativeEffect: 0.1 };
/** The first measurement and up to two retries with fresh samples; a leak must show in all of them. */
const MAX_ATTEMPTS = 3;
/** One attempt of a timing test takes a few seconds on a busy 2-core machine; three must fit. */
const TIMEOUT_MS = 180_000;

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

const results: Record<string, unknown> = { database: process.env.TEST_DATABASE_URL ? 'postgres' : 'sqlite', criteria: { unit: UNIT_LEAK, http: HTTP_LEAK, maxAttempts: MAX_ATTEMPTS } };

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

function shuffle<T>(values: T[]): T[] {
  for (let i = values.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [values[i], values[j]] = [values[j], values[i]];
  }
  return values;
}

/** One measurement: its comparisons (candidate against baseline) and whatever else it reports. */
interface Attempt {
  comparisons: Record<string, TimingComparison>;
}

interface Verdict<T extends Attempt> {
  /** True only if every one of MAX_ATTEMPTS attempts showed a leak. */
  leak: boolean;
  attempts: T[];
}

function showsLeak(attempt: Attempt): boolean {
  return Object.values(attempt.comparisons).some((comparison) => comparison.leak);
}

/** What the log and the results file keep of a comparison. */
function reported(comparison: TimingComparison) {
  return {
    pValue: Number(comparison.pValue.toPrecision(3)),
    relativeShift: Number(comparison.relativeShift.toFixed(4)),
    ratioOfMedians: Number(comparison.ratioOfMedians.toFixed(4)),
    shift: Number(comparison.shift.toPrecision(4)),
    median: comparison.median,
    n: comparison.n,
    leak: comparison.leak,
  };
}

function describeComparison(c: TimingComparison): string {
  const percent = (fraction: number) => `${fraction >= 0 ? '+' : ''}${(100 * fraction).toFixed(1)} %`;
  return `p = ${c.pValue.toPrecision(3)}, Hodges–Lehmann shift ${percent(c.relativeShift)} of the baseline median, medians ${c.median.candidate.toPrecision(4)} / ${c.median.baseline.toPrecision(4)} (ratio ${c.ratioOfMedians.toFixed(3)}), n = ${c.n.candidate} + ${c.n.baseline}${c.leak ? ' → leak' : ''}`;
}

function describeAttempt(attempt: Attempt): string {
  return Object.entries(attempt.comparisons)
    .map(([key, comparison]) => `  ${key}: ${describeComparison(comparison)}`)
    .join('\n');
}

/**
 * Measures, and measures again with fresh samples while the measurement shows a leak, up to
 * MAX_ATTEMPTS in all. Records every attempt under `name` in the results file.
 */
async function judge<T extends Attempt>(name: string, measure: () => T | Promise<T>, extra: Record<string, unknown> = {}): Promise<Verdict<T>> {
  const attempts: T[] = [];
  const recorded: unknown[] = [];
  let leak = true;
  while (leak && attempts.length < MAX_ATTEMPTS) {
    const attempt = await measure();
    attempts.push(attempt);
    leak = showsLeak(attempt);
    const comparisons = Object.fromEntries(Object.entries(attempt.comparisons).map(([key, comparison]) => [key, reported(comparison)]));
    recorded.push({ ...attempt, comparisons });
    console.log(`${name}, attempt ${attempts.length} of at most ${MAX_ATTEMPTS}: ${leak ? 'LEAK' : 'no leak'}\n${describeAttempt(attempt)}`);
  }
  results[name] = { ...extra, leak, attempts: recorded };
  return { leak, attempts };
}

/** Fails, showing every attempt's p-values and shifts, if the verdict is a leak. */
function expectNoLeak(verdict: Verdict<Attempt>): void {
  if (!verdict.leak) return;
  const attempts = verdict.attempts.map((attempt, i) => `attempt ${i + 1}:\n${describeAttempt(attempt)}`);
  throw new Error(`a timing difference both significant and large on all ${verdict.attempts.length} attempts:\n${attempts.join('\n')}`);
}

interface UnitAttempt extends Attempt {
  /** Median and lower quartile over the batches of the ns per call. */
  nsPerCall: { median: Record<string, number>; lowerQuartile: Record<string, number> };
}

/**
 * Times `compare(candidate)` for each candidate in rounds of `batch` calls, the candidates in a
 * fresh random order each round (so drift, GC and other processes hit all alike): one sample of
 * ns per call per round and candidate.
 */
function timePerCall(candidates: Record<string, string>, compare: (candidate: string) => boolean, rounds = UNIT_ROUNDS, batch = UNIT_BATCH): Record<string, number[]> {
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
  return samples;
}

/** Times the candidates and compares each [candidate, baseline] pair with the unit-level criteria. */
function unitAttempt(candidates: Record<string, string>, compare: (candidate: string) => boolean, pairs: Array<[string, string]>, rounds?: number, batch?: number): UnitAttempt {
  const samples = timePerCall(candidates, compare, rounds, batch);
  const summarise = (q: number) => Object.fromEntries(Object.entries(samples).map(([name, values]) => [name, Math.round(quantile(values, q))]));
  return {
    nsPerCall: { median: summarise(0.5), lowerQuartile: summarise(0.25) },
    comparisons: Object.fromEntries(pairs.map(([candidate, baseline]) => [`${candidate}Vs${baseline[0].toUpperCase()}${baseline.slice(1)}`, compareTimings(samples[candidate], samples[baseline], UNIT_LEAK)])),
  };
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
    const calls = UNIT_ROUNDS * UNIT_BATCH * 3;

    it('takes as long for a secret sharing all but one character as for one sharing nothing (secretMatchesHash)', async () => {
      expect(secretMatchesHash(real, stored)).toBe(true);
      for (const candidate of Object.values(candidates)) expect(secretMatchesHash(candidate, stored)).toBe(false);
      const pairs: Array<[string, string]> = [['prefix', 'nothing'], ['prefix', 'random'], ['random', 'nothing']];
      const verdict = await judge('secretMatchesHash', () => unitAttempt(candidates, (candidate) => secretMatchesHash(candidate, stored), pairs), { callsPerAttempt: calls });
      expectNoLeak(verdict);
    }, TIMEOUT_MS);

    it('takes as long for a stored digest matching all but its last hex digit as for one matching none (constantTimeEqual)', async () => {
      const digest = stored;
      const digests = { prefix: digest.slice(0, -1) + (digest.endsWith('0') ? '1' : '0'), nothing: [...digest].map((c) => ((parseInt(c, 16) + 8) % 16).toString(16)).join(''), equal: digest };
      const pairs: Array<[string, string]> = [['prefix', 'nothing'], ['equal', 'nothing']];
      const verdict = await judge('constantTimeEqual', () => unitAttempt(digests, (candidate) => constantTimeEqual(candidate, digest), pairs), { callsPerAttempt: calls });
      expectNoLeak(verdict);
    }, TIMEOUT_MS);

    it('positive control: the same harness and decision rule flag a leaky character-by-character comparison', async () => {
      // An early-exit loop over long values: the leak these tests exist to catch, made big enough to see.
      const long = randomOfLength(20_000);
      const leaky = (candidate: string) => {
        if (candidate.length !== long.length) return false;
        for (let i = 0; i < long.length; i++) if (candidate.charCodeAt(i) !== long.charCodeAt(i)) return false;
        return true;
      };
      // 30 rounds: the smallest sample (with a margin) for which the U test's normal approximation holds.
      const verdict = await judge('leakyControl', () => unitAttempt({ prefix: allButLast(long), nothing: sharingNothing(long) }, leaky, [['prefix', 'nothing']], 30, 50));
      // A leak verdict needs every attempt to show it: the instrument flags a real leak each time it looks.
      expect(verdict.leak).toBe(true);
      expect(verdict.attempts).toHaveLength(MAX_ATTEMPTS);
      for (const attempt of verdict.attempts) expect(attempt.comparisons.prefixVsNothing).toMatchObject({ significant: true, large: true });
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

    interface HttpAttempt extends Attempt {
      medianMs: { prefix: number; nothing: number };
      /** Median of prefix/nothing within pairs: each pair sees the same load, so this is the least disturbed ratio (reported, not judged). */
      medianPairRatio: number;
    }

    /**
     * One attempt: HTTP_WARMUP then HTTP_TRIALS pairs of requests, one request at a time, each pair
     * one of each kind in random order, then the two latency samples compared with the HTTP-level
     * criteria.
     */
    async function httpAttempt(send: (kind: 'prefix' | 'nothing') => Promise<number>): Promise<HttpAttempt> {
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
      return {
        medianMs: { prefix: median(samples.prefix), nothing: median(samples.nothing) },
        medianPairRatio: median(pairRatios),
        comparisons: { prefixVsNothing: compareTimings(samples.prefix, samples.nothing, HTTP_LEAK) },
      };
    }

    async function compareLatencies(name: string, send: (kind: 'prefix' | 'nothing') => Promise<number>): Promise<Verdict<HttpAttempt>> {
      return judge(name, () => httpAttempt(send), { trialsEachPerAttempt: HTTP_TRIALS });
    }

    it('a client secret at /token (Basic): all-but-last-character and sharing-nothing are refused alike in time', async () => {
      const wrong = { prefix: allButLast(client.clientSecret), nothing: sharingNothing(client.clientSecret) };
      const verdict = await compareLatencies('clientSecretAtToken', async (kind) => {
        const reply = await postToken(app, { grant_type: 'client_credentials' }, { authorization: basicAuth(client.clientId, wrong[kind]) });
        expect(reply.status).toBe(401);
        return reply.status;
      });
      expectNoLeak(verdict);
    }, TIMEOUT_MS);

    it('an access token at /api/v1: all-but-last-character and sharing-nothing are refused alike in time', async () => {
      const token = await obtainAccessToken(app, client, user, 'notes:read');
      expect((await fetch(app.url('/api/v1/notes'), { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
      const wrong = { prefix: allButLast(token), nothing: sharingNothing(token) };
      const verdict = await compareLatencies('accessTokenAtApi', async (kind) => {
        const response = await fetch(app.url('/api/v1/notes'), { headers: { authorization: `Bearer ${wrong[kind]}` } });
        await response.arrayBuffer();
        expect(response.status).toBe(401);
        return response.status;
      });
      expectNoLeak(verdict);
    }, TIMEOUT_MS);

    it('an authorization code at /token: all-but-last-character and sharing-nothing are refused alike in time', async () => {
      // The real code stays unredeemed and valid throughout: only near misses are sent.
      const { code, pkce } = await obtainCode(app, client, user);
      const wrong = { prefix: allButLast(code), nothing: sharingNothing(code) };
      const verdict = await compareLatencies('codeAtToken', async (kind) => {
        const reply = await postToken(
          app,
          { grant_type: 'authorization_code', code: wrong[kind], redirect_uri: client.redirectUri, code_verifier: pkce.verifier },
          { authorization: basicAuth(client.clientId, client.clientSecret) },
        );
        expect(`${reply.status} ${String(reply.body.error)}`).toBe('400 invalid_grant');
        return reply.status;
      });
      expectNoLeak(verdict);
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
