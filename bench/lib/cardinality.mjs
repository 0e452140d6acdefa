/**
 * How much data the benchmark runs against (issue 47): one client, one person, one token (the
 * "one" preset, as every run before issue 47) or a deployment's worth ("realistic", the default):
 * thousands of clients, a hundred thousand people with their items, hundreds of thousands of live
 * access tokens and tens of thousands of refresh-token families, which the scenarios pick at
 * random, as real traffic does (Zipf: a few clients and people make most requests) or uniformly
 * (every pick as likely: the worst case for any cache).
 *
 * BENCH_CARDINALITY=realistic|one (realistic), then each count on its own:
 * BENCH_CLIENTS (10,000), BENCH_PEOPLE (100,000), BENCH_ACCESS_TOKENS (200,000),
 * BENCH_REFRESH_FAMILIES (50,000), BENCH_SESSIONS (1,000: signed-in browsers the code flows use),
 * BENCH_DISTRIBUTION=zipf|uniform (zipf), BENCH_ZIPF_EXPONENT (1.0).
 * Pre-filling is done before any timing, by bulk inserts (never through the API), for every target alike.
 */

const PRESETS = {
  realistic: { clients: 10_000, people: 100_000, accessTokens: 200_000, refreshFamilies: 50_000, sessions: 1_000 },
  one: { clients: 1, people: 1, accessTokens: 1, refreshFamilies: 0, sessions: 1 },
};

function count(env, name, fallback) {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a whole number ≥ 0, not ${raw}`);
  return value;
}

/** The cardinality of this run, from the environment (see above). */
export function readCardinality(env = process.env) {
  const preset = env.BENCH_CARDINALITY ?? 'realistic';
  if (!(preset in PRESETS)) throw new Error(`BENCH_CARDINALITY must be ${Object.keys(PRESETS).join(' or ')}, not ${preset}`);
  const base = PRESETS[preset];
  const distribution = env.BENCH_DISTRIBUTION ?? 'zipf';
  if (distribution !== 'zipf' && distribution !== 'uniform') throw new Error(`BENCH_DISTRIBUTION must be zipf or uniform, not ${distribution}`);
  const exponent = Number(env.BENCH_ZIPF_EXPONENT ?? 1);
  if (!(exponent > 0)) throw new Error(`BENCH_ZIPF_EXPONENT must be > 0, not ${env.BENCH_ZIPF_EXPONENT}`);
  return {
    preset,
    clients: Math.max(1, count(env, 'BENCH_CLIENTS', base.clients)),
    people: Math.max(1, count(env, 'BENCH_PEOPLE', base.people)),
    accessTokens: Math.max(1, count(env, 'BENCH_ACCESS_TOKENS', base.accessTokens)),
    refreshFamilies: count(env, 'BENCH_REFRESH_FAMILIES', base.refreshFamilies),
    sessions: Math.max(1, count(env, 'BENCH_SESSIONS', base.sessions)),
    distribution,
    exponent,
  };
}

/**
 * A function returning indexes in [0, n): uniformly, or Zipf-distributed (index k with weight
 * 1/(k+1)^exponent; index 0 the most requested). The cumulative table is built once (8 bytes per
 * index); each pick is one random number and a binary search, cheap enough to make per request.
 * `random` may be given for a repeatable sequence.
 */
export function picker(n, { distribution = 'zipf', exponent = 1, random = Math.random } = {}) {
  if (!Number.isInteger(n) || n < 1) throw new Error(`picker: n must be a whole number ≥ 1, not ${n}`);
  if (distribution === 'uniform' || n === 1) return () => Math.floor(random() * n);
  const cumulative = new Float64Array(n);
  let total = 0;
  for (let k = 0; k < n; k++) {
    total += 1 / (k + 1) ** exponent;
    cumulative[k] = total;
  }
  return () => {
    const target = random() * total;
    let low = 0;
    let high = n - 1;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (cumulative[middle] < target) low = middle + 1;
      else high = middle;
    }
    return low;
  };
}

/** Share of picks that land on the `top` most requested indexes: what a cache of that many entries could hit at best. */
export function topShare(n, top, { distribution = 'zipf', exponent = 1 } = {}) {
  if (distribution === 'uniform') return Math.min(1, top / n);
  let head = 0;
  let total = 0;
  for (let k = 0; k < n; k++) {
    const weight = 1 / (k + 1) ** exponent;
    total += weight;
    if (k < top) head += weight;
  }
  return head / total;
}

/** One line for the logs and the results: what this run's data looked like. */
export function describeCardinality(c) {
  return `${c.preset}: ${c.clients.toLocaleString('en')} clients, ${c.people.toLocaleString('en')} people, ${c.accessTokens.toLocaleString('en')} live access tokens, ${c.refreshFamilies.toLocaleString('en')} refresh families, ${c.sessions.toLocaleString('en')} sessions, picked ${c.distribution === 'zipf' ? `Zipf (s=${c.exponent})` : 'uniformly'}`;
}
