// Self-check for report.mjs: node bench/lib/report.test.mjs
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SCENARIOS, checkTargets, ratios, renderSvg, renderTable, summarize } from './report.mjs';

/** Runs of one (target, scenario): one per rps value, other figures shared unless given per repeat. */
function runsOf(target, scenario, rpsValues, { p50 = 1, p99 = 10, errors = 0, rssMb = 100 } = {}) {
  const each = (value, i) => (Array.isArray(value) ? value[i] : value);
  return rpsValues.map((rps, i) => ({
    target,
    scenario,
    repeat: i + 1,
    rps,
    p50: each(p50, i),
    p99: each(p99, i),
    errors: each(errors, i),
    requests: rps * 30,
    rssMb: each(rssMb, i),
  }));
}

const byKey = (summary, target, scenario) => summary.find((s) => s.target === target && s.scenario === scenario);
const byId = (targets, id) => targets.find((t) => t.id === id);

describe('summarize', () => {
  const summary = summarize([
    ...runsOf('latchkey-sqlite', 'a', [900, 1100, 1000], { p99: [9, 12, 10], errors: [0, 2, 1], rssMb: [90, 120, 95] }),
    ...runsOf('oidc-provider', 'a', [400, 600, 450, 500]),
    ...runsOf('baseline', 'a', [3000, 3100, 2900], { p99: [2, undefined, 3] }),
  ]);

  it('takes median, min and max over repeats', () => {
    const row = byKey(summary, 'latchkey-sqlite', 'a');
    assert.equal(row.repeats, 3);
    assert.deepEqual({ median: row.rps.median, min: row.rps.min, max: row.rps.max }, { median: 1000, min: 900, max: 1100 });
    assert.deepEqual(row.p99, { median: 10, min: 9, max: 12 });
  });

  it('averages the middle pair for an even number of repeats', () => {
    assert.equal(byKey(summary, 'oidc-provider', 'a').rps.median, 475);
  });

  it('gives spread as (max - min) / median in percent', () => {
    assert.equal(byKey(summary, 'latchkey-sqlite', 'a').rps.spreadPct, 20);
  });

  it('sums errors and takes the largest RSS', () => {
    const row = byKey(summary, 'latchkey-sqlite', 'a');
    assert.equal(row.errors, 3);
    assert.deepEqual(row.rssMb, { max: 120 });
  });

  it('ignores a missing figure instead of turning the median into NaN', () => {
    assert.deepEqual(byKey(summary, 'baseline', 'a').p99, { median: 2.5, min: 2, max: 3 });
  });

  it('rejects a run without target or scenario', () => {
    assert.throws(() => summarize([{ rps: 1 }]), TypeError);
  });

  it('exports a label for every scenario', () => {
    assert.deepEqual(Object.keys(SCENARIOS), ['a', 'b10k', 'b100k', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j']);
  });
});

describe('ratios', () => {
  const summary = summarize([
    ...runsOf('latchkey-sqlite', 'a', [900, 1000, 1100], { p99: 5 }),
    ...runsOf('baseline', 'a', [1900, 2000, 2100]),
    ...runsOf('oidc-provider', 'a', [400, 500, 550], { p99: 10 }),
    ...runsOf('latchkey-sqlite', 'g', [50, 50, 50]),
  ]);
  const [a, g] = ratios(summary);

  it('compares medians with the baseline (a only) and oidc-provider', () => {
    assert.equal(a.scenario, 'a');
    assert.equal(a.vsBaseline, 0.5);
    assert.equal(a.vsOidc, 2);
    assert.equal(a.p99VsOidc, 0.5);
  });

  it('gives the range from the worst and best pairing of repeats', () => {
    assert.deepEqual(a.vsOidcRange, [900 / 550, 1100 / 400]);
  });

  it('leaves ratios null where the reference did not run', () => {
    assert.deepEqual(g, {
      scenario: 'g',
      vsBaseline: null,
      vsOidc: null,
      vsOidcRange: null,
      p99VsOidc: null,
      vsOidcRedis: null,
      vsOidcRedisRange: null,
      p99VsOidcRedis: null,
    });
  });

  it('leaves the ratios against the Redis peer null when it did not run', () => {
    assert.equal(a.vsOidcRedis, null);
    assert.equal(a.vsOidcRedisRange, null);
    assert.equal(a.p99VsOidcRedis, null);
  });

  it('can be computed for another candidate', () => {
    const other = summarize([...runsOf('latchkey-postgres', 'a', [500]), ...runsOf('oidc-provider', 'a', [250])]);
    assert.equal(ratios(other, 'latchkey-postgres')[0].vsOidc, 2);
  });

  describe('against oidc-provider on Redis', () => {
    const both = summarize([
      ...runsOf('latchkey-sqlite', 'c', [3000, 3300, 3600], { p99: 6 }),
      ...runsOf('latchkey-postgres', 'c', [1800, 2000, 2200], { p99: 12 }),
      ...runsOf('oidc-provider', 'c', [1400, 1500, 1600], { p99: 10 }),
      ...runsOf('oidc-provider-redis', 'c', [900, 1000, 1100], { p99: 16 }),
    ]);
    const [sqlite] = ratios(both, 'latchkey-sqlite');
    const [postgres] = ratios(both, 'latchkey-postgres');

    it('gives every candidate its ratios against both peers', () => {
      assert.equal(sqlite.vsOidc, 3300 / 1500);
      assert.equal(sqlite.vsOidcRedis, 3.3);
      assert.equal(sqlite.p99VsOidcRedis, 6 / 16);
      assert.equal(postgres.vsOidc, 2000 / 1500);
      assert.equal(postgres.vsOidcRedis, 2);
      assert.equal(postgres.p99VsOidcRedis, 0.75);
    });

    it('gives the range against the Redis peer from the worst and best pairing of repeats', () => {
      assert.deepEqual(postgres.vsOidcRedisRange, [1800 / 1100, 2200 / 900]);
      assert.deepEqual(postgres.vsOidcRange, [1800 / 1600, 2200 / 1400]);
    });

    it('counts the Redis peer as a reference, not a candidate', () => {
      assert.deepEqual(ratios(both, 'oidc-provider-redis')[0].vsOidcRedis, 1);
      assert.deepEqual(
        both.map((row) => row.target),
        ['latchkey-sqlite', 'latchkey-postgres', 'oidc-provider', 'oidc-provider-redis'],
      );
    });

    it('leaves the targets to oidc-provider in memory', () => {
      const c = checkTargets(both).find((t) => t.id === 'c-vs-oidc');
      assert.equal(c.detail, '2.20× (1.88–2.57×), p99 0.60×');
    });
  });
});

describe('checkTargets', () => {
  const lk = 'latchkey-sqlite';
  const summary = summarize([
    // a: 2.5× oidc-provider, p99 better; 25% of baseline.
    ...runsOf(lk, 'a', [2400, 2500, 2600], { p99: 4, rssMb: 150 }),
    ...runsOf('oidc-provider', 'a', [1000, 1000, 1000], { p99: 8 }),
    ...runsOf('baseline', 'a', [10000, 10000, 10000]),
    // c: fast enough but p99 worse; d: p99 fine but only 1.5×.
    ...runsOf(lk, 'c', [3000, 3000, 3000], { p99: 12 }),
    ...runsOf('oidc-provider', 'c', [1000, 1000, 1000], { p99: 10 }),
    ...runsOf(lk, 'd', [1500, 1500, 1500], { errors: [0, 4, 0] }),
    ...runsOf('oidc-provider', 'd', [1000, 1000, 1000]),
    // e: oidc-provider missing; f: Latchkey missing.
    ...runsOf(lk, 'e', [500, 500, 500]),
    ...runsOf('oidc-provider', 'f', [1000, 1000, 1000]),
    // h: 1.6×, enough here (1.5×), p99 the same.
    ...runsOf(lk, 'h', [800, 800, 800], { p99: 10 }),
    ...runsOf('oidc-provider', 'h', [500, 500, 500], { p99: 10 }),
    // b: 100k costs 1.25× of 10k.
    ...runsOf(lk, 'b10k', [1250, 1250, 1250]),
    ...runsOf(lk, 'b100k', [1000, 1000, 1000], { rssMb: [150, 210, 150] }),
  ]);
  const targets = checkTargets(summary);

  it('lists every target once', () => {
    assert.deepEqual(
      targets.map((t) => t.id),
      ['a-vs-oidc', 'c-vs-oidc', 'd-vs-oidc', 'e-vs-oidc', 'f-vs-oidc', 'h-vs-oidc', 'a-vs-baseline', 'b-list-scaling', 'rss'],
    );
    for (const t of targets) assert.ok(t.description && t.detail, t.id);
  });

  it('meets the oidc-provider target only with 2× throughput and p99 no worse', () => {
    assert.equal(byId(targets, 'a-vs-oidc').met, true);
    assert.equal(byId(targets, 'a-vs-oidc').detail, '2.50× (2.40–2.60×), p99 0.50×');
    assert.equal(byId(targets, 'c-vs-oidc').met, false);
    assert.equal(byId(targets, 'd-vs-oidc').met, false);
    assert.match(byId(targets, 'd-vs-oidc').detail, /errors: latchkey-sqlite 4/);
  });

  it('asks 1.5×, not 2×, of the OpenID code flow (h)', () => {
    assert.equal(byId(targets, 'h-vs-oidc').met, true);
    assert.match(byId(targets, 'h-vs-oidc').description, /at least 1\.5×/);
  });

  it('reports null, not a verdict, when a side is missing', () => {
    assert.equal(byId(targets, 'e-vs-oidc').met, null);
    assert.match(byId(targets, 'e-vs-oidc').detail, /oidc-provider did not run e/);
    assert.equal(byId(targets, 'f-vs-oidc').met, null);
    assert.match(byId(targets, 'f-vs-oidc').detail, /latchkey-sqlite did not run f/);
  });

  it('judges baseline, list scaling and RSS', () => {
    assert.equal(byId(targets, 'a-vs-baseline').met, false);
    assert.match(byId(targets, 'a-vs-baseline').detail, /25\.0% of baseline/);
    assert.equal(byId(targets, 'b-list-scaling').met, false);
    assert.match(byId(targets, 'b-list-scaling').detail, /^1\.25×/);
    assert.equal(byId(targets, 'rss').met, false);
    assert.equal(byId(targets, 'rss').detail, 'max 210.0 MB (in b100k)');
  });

  it('passes baseline, list scaling and RSS when within bounds', () => {
    const good = checkTargets(
      summarize([
        ...runsOf(lk, 'a', [3000], { rssMb: 120 }),
        ...runsOf('baseline', 'a', [10000]),
        ...runsOf(lk, 'b10k', [1100]),
        ...runsOf(lk, 'b100k', [1000]),
      ]),
    );
    assert.equal(byId(good, 'a-vs-baseline').met, true);
    assert.equal(byId(good, 'b-list-scaling').met, true);
    assert.equal(byId(good, 'rss').met, true);
  });

  it('is all null without runs', () => {
    assert.ok(checkTargets([]).every((t) => t.met === null));
  });
});

describe('renderTable', () => {
  const summary = summarize([
    ...runsOf('latchkey-sqlite', 'a', [12000, 12345.4, 12500], { p50: 1.234, p99: 8.44, rssMb: 95.3 }),
    ...runsOf('oidc-provider', 'a', [5000, 5000, 5000], { p99: 20 }),
    ...runsOf('baseline', 'a', [50000, 50000, 50000]), // 25%: below the 30% target
    ...runsOf('latchkey-sqlite', 'g', [48.2, 48.5, 49]),
    ...runsOf('odd|name', 'c', [10]),
  ]);
  const table = renderTable(summary, ratios(summary), checkTargets(summary), { latchkeyTarget: 'latchkey-sqlite' });
  const lines = table.split('\n');

  it('has one row per (scenario, server) with formatted figures', () => {
    assert.match(table, /^\| Scenario +\| Server +\| req\/s \(median ± spread\) +\|/);
    assert.match(table, /\| a · Bearer read +\| latchkey-sqlite +\| +12,345 ± 4\.1% \| +1\.2 \| +8\.4 \| +0 \| +95\.3 \| +0\.25× \| 2\.47× \(2\.40–2\.50×\) \|/);
    assert.match(table, /\| +\| oidc-provider +\| +5,000 ± 0\.0% \|/);
    assert.match(table, /\| g · Login \(argon2id\) +\| latchkey-sqlite +\| +48\.5 ± 1\.6% \|/);
  });

  it('escapes pipes so every row keeps its columns', () => {
    assert.match(table, /odd\\\|name/);
    const results = lines.slice(0, lines.indexOf(''));
    assert.equal(results.length, 2 + summary.length);
    for (const line of results) assert.equal(line.split(/(?<!\\)\|/).length, 11, line);
  });

  it('lists targets with ✅, ❌ and –', () => {
    assert.match(table, /\| ✅ +\| a \(Bearer read\): at least 2× oidc-provider's throughput/);
    assert.match(table, /\| ❌ +\| a \(Bearer read\): at least 30% of the bare Fastify baseline/);
    assert.match(table, /\| – +\| c \(client_credentials\)/);
  });

  it('computes ratios and targets itself when not given', () => {
    assert.equal(renderTable(summary, undefined, undefined, { latchkeyTarget: 'latchkey-sqlite' }), table);
  });

  it('has no Redis column when the Redis peer did not run', () => {
    assert.doesNotMatch(table, /oidc-provider-redis/);
  });

  describe('with oidc-provider on Redis', () => {
    const withRedis = summarize([
      ...runsOf('latchkey-sqlite', 'c', [3000, 3300, 3600]),
      ...runsOf('latchkey-postgres', 'c', [1800, 2000, 2200]),
      ...runsOf('oidc-provider', 'c', [1400, 1500, 1600]),
      ...runsOf('oidc-provider-redis', 'c', [900, 1000, 1100]),
      ...runsOf('latchkey-postgres', 'g', [40]),
    ]);
    const redisTable = renderTable(withRedis, undefined, undefined, { latchkeyTarget: 'latchkey-sqlite' });
    const redisLines = redisTable.split('\n');
    const results = redisLines.slice(0, redisLines.indexOf(''));

    it('adds a ×oidc-provider-redis column after ×oidc-provider', () => {
      assert.match(results[0], /\| +×oidc-provider \| ×oidc-provider-redis \|$/);
      for (const line of results) assert.equal(line.split(/(?<!\\)\|/).length, 12, line);
    });

    it('fills it for both Latchkeys, with the range of pairing repeats', () => {
      assert.match(redisTable, /\| latchkey-sqlite +\|.*\| 2\.20× \(1\.88–2\.57×\) \| +3\.30× \(2\.73–4\.00×\) \|/);
      assert.match(redisTable, /\| latchkey-postgres +\|.*\| 1\.33× \(1\.13–1\.57×\) \| +2\.00× \(1\.64–2\.44×\) \|/);
    });

    it('leaves it blank on reference rows and dashed where no peer ran', () => {
      assert.match(redisTable, /\| oidc-provider-redis +\| +1,000 ± 20\.0% \|.*\| +\| +\| +\|$/m);
      assert.match(redisTable, /\| g · Login \(argon2id\) +\| latchkey-postgres +\|.*\| +– \| +– \|$/m);
    });

    it('says which peer each Latchkey is compared with', () => {
      assert.match(redisTable, /×baseline, ×oidc-provider and ×oidc-provider-redis compare median req\/s/);
      assert.match(redisTable, /compare latchkey-sqlite with the first, latchkey-postgres with the second/);
    });
  });
});

describe('renderSvg', () => {
  const summary = summarize([
    ...runsOf('latchkey-sqlite', 'a', [12000, 12345, 12500]),
    ...runsOf('oidc-provider', 'a', [5000, 5100, 5200]),
    ...runsOf('A&B <x>', 'a', [7000]),
    ...runsOf('latchkey-sqlite', 'g', [48, 49, 50]),
  ]);
  const svg = renderSvg(summary, { latchkeyTarget: 'latchkey-sqlite', title: 'Bench "1" & <2>' });

  it('is a titled, self-contained SVG', () => {
    assert.ok(svg.startsWith('<svg '));
    assert.ok(svg.trimEnd().endsWith('</svg>'));
    assert.match(svg, /<title id="report-title">Bench &quot;1&quot; &amp; &lt;2&gt;<\/title>/);
    assert.match(svg, /<desc id="report-desc">[^<]*latchkey-sqlite 12,345\/s/);
    assert.doesNotMatch(svg, /<script|@import|url\(|href=/);
  });

  it('draws one bar per (scenario, server) and prints its value', () => {
    assert.equal(svg.match(/<rect /g).length, summary.length);
    assert.match(svg, />12,345\/s<\/text>/);
    assert.match(svg, />48\.5\/s<\/text>|>49\.0\/s<\/text>/);
  });

  it('says that each scenario has its own scale', () => {
    assert.match(svg, /own scale/);
  });

  it('escapes server names', () => {
    assert.ok(svg.includes('A&amp;B &lt;x&gt;'));
    assert.ok(!svg.includes('A&B'));
    assert.doesNotMatch(svg, /&(?!(amp|lt|gt|quot|apos);)/);
  });

  it('has balanced tags', () => {
    const stack = [];
    for (const [, closing, name, selfClosing] of svg.matchAll(/<(\/?)([a-zA-Z]+)\b[^>]*?(\/?)>/g)) {
      if (selfClosing) continue;
      if (closing) assert.equal(stack.pop(), name);
      else stack.push(name);
    }
    assert.deepEqual(stack, []);
  });

  it('prints the ratio of each candidate against oidc-provider under its scenario', () => {
    assert.match(svg, />latchkey-sqlite: 2\.42× oidc-provider<\/text>/);
    assert.doesNotMatch(svg, /oidc-provider-redis/);
  });

  it('prints the ratios against oidc-provider on Redis when it ran, in the chart and its description', () => {
    const withRedis = renderSvg(
      summarize([
        ...runsOf('latchkey-sqlite', 'c', [3000, 3300, 3600]),
        ...runsOf('latchkey-postgres', 'c', [1800, 2000, 2200]),
        ...runsOf('oidc-provider', 'c', [1400, 1500, 1600]),
        ...runsOf('oidc-provider-redis', 'c', [900, 1000, 1100]),
      ]),
    );
    assert.match(withRedis, />latchkey-sqlite: 2\.20× oidc-provider, 3\.30× oidc-provider-redis<\/text>/);
    assert.match(withRedis, />latchkey-postgres: 1\.33× oidc-provider, 2\.00× oidc-provider-redis<\/text>/);
    assert.match(withRedis, /<desc id="report-desc">[^<]*latchkey-postgres: 1\.33× oidc-provider, 2\.00× oidc-provider-redis/);
    assert.match(withRedis, />Peers: oidc-provider in memory \(compare with latchkey-sqlite\), oidc-provider-redis on Redis \(with latchkey-postgres\)\.</);
    assert.equal(withRedis.match(/<rect /g).length, 4);
    // Its own colour, not the in-memory peer's.
    assert.match(withRedis, /<rect [^>]*fill="#8C3B00"><title>oidc-provider-redis, c:/);
    assert.match(withRedis, /<rect [^>]*fill="#C85200"><title>oidc-provider, c:/);
  });

  it('still renders without runs', () => {
    const empty = renderSvg([]);
    assert.ok(empty.startsWith('<svg '));
    assert.equal(empty.match(/<rect /g), null);
    assert.match(empty, /No runs to show/);
  });
});
