// Self-check for report.mjs: node bench/lib/report.test.mjs
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SCENARIOS, checkTargets, ratios, renderCurveTable, renderSvg, renderTable, summarize } from './report.mjs';

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

    it('judges each Latchkey against its own peer in the targets', () => {
      assert.equal(byId(checkTargets(both), 'c-postgres-vs-redis').detail, '2.00× (1.64–2.44×), p99 0.75×');
      assert.equal(byId(checkTargets(both), 'c-sqlite-vs-memory').detail, '2.20× (1.88–2.57×), p99 0.60× (not judged)');
    });
  });
});

describe('checkTargets', () => {
  const pg = 'latchkey-postgres';
  const redis = 'oidc-provider-redis';
  const lite = 'latchkey-sqlite';
  const memory = 'oidc-provider';
  const variant = 'latchkey-postgres-variant';
  const compared = ['a', 'c', 'd', 'e', 'f', 'h', 'i', 'j'];
  const summary = summarize([
    // Production against production.
    ...runsOf(pg, 'a', [1500, 1600, 1700], { p99: 8, rssMb: 250 }),
    ...runsOf(redis, 'a', [950, 1000, 1050], { p99: 10, rssMb: 300 }),
    ...runsOf(pg, 'c', [1400], { p99: 5 }),
    ...runsOf(redis, 'c', [1000], { p99: 10 }),
    // An A/B instance, far ahead on every count: not judged.
    ...runsOf(variant, 'c', [5000], { p99: 1, rssMb: 900 }),
    ...runsOf(pg, 'd', [2000, 2000, 2000], { p99: 12, errors: [0, 3, 0] }),
    ...runsOf(redis, 'd', [1000], { p99: 10 }),
    ...runsOf(pg, 'e', [500]),
    ...runsOf(redis, 'f', [1000]),
    ...runsOf(pg, 'h', [750], { p99: 10 }),
    ...runsOf(redis, 'h', [500], { p99: 10 }),
    // Embedded: p99 worse in a, which this target does not judge.
    ...runsOf(lite, 'a', [3000], { p99: 20 }),
    ...runsOf(memory, 'a', [1000], { p99: 10 }),
    ...runsOf(lite, 'c', [1400]),
    ...runsOf(memory, 'c', [1000]),
    ...runsOf(lite, 'e', [500]),
    ...runsOf(memory, 'f', [1000]),
    ...runsOf(lite, 'h', [750]),
    ...runsOf(memory, 'h', [500]),
  ]);
  const targets = checkTargets(summary);

  it('lists every target once, in the order of the issue, then the older ones', () => {
    assert.deepEqual(targets.map((t) => t.id), [
      ...compared.map((s) => `${s}-postgres-vs-redis`),
      ...compared.map((s) => `${s}-sqlite-vs-memory`),
      'rss-postgres-vs-redis',
      'a-vs-baseline',
      'b-list-scaling',
    ]);
    for (const t of targets) assert.ok(t.description && t.detail, t.id);
  });

  const cases = [
    { id: 'a-postgres-vs-redis', met: true, detail: '1.60× (1.43–1.79×), p99 0.80×', why: 'met: 1.6× with p99 better' },
    { id: 'h-postgres-vs-redis', met: true, detail: '1.50× (1.50–1.50×), p99 1.00×', why: 'met at exactly 1.5× and the same p99' },
    { id: 'c-postgres-vs-redis', met: false, detail: '1.40× (1.40–1.40×), p99 0.50×', why: 'not met on throughput' },
    { id: 'd-postgres-vs-redis', met: false, detail: '2.00× (2.00–2.00×), p99 1.20×; errors: latchkey-postgres 3', why: 'not met on p99' },
    { id: 'e-postgres-vs-redis', met: null, detail: 'no data: oidc-provider-redis did not run e', why: 'null without the peer' },
    { id: 'f-postgres-vs-redis', met: null, detail: 'no data: latchkey-postgres did not run f', why: 'null without Latchkey' },
    { id: 'i-postgres-vs-redis', met: null, detail: 'no data: latchkey-postgres and oidc-provider-redis did not run i', why: 'null without either' },
    { id: 'a-sqlite-vs-memory', met: true, detail: '3.00× (3.00–3.00×), p99 2.00× (not judged)', why: 'met on throughput alone, p99 shown' },
    { id: 'h-sqlite-vs-memory', met: true, detail: '1.50× (1.50–1.50×), p99 1.00× (not judged)', why: 'met at exactly 1.5×' },
    { id: 'c-sqlite-vs-memory', met: false, detail: '1.40× (1.40–1.40×), p99 1.00× (not judged)', why: 'not met on throughput' },
    { id: 'e-sqlite-vs-memory', met: null, detail: 'no data: oidc-provider did not run e', why: 'null without the peer' },
    { id: 'f-sqlite-vs-memory', met: null, detail: 'no data: latchkey-sqlite did not run f', why: 'null without Latchkey' },
    { id: 'd-sqlite-vs-memory', met: null, detail: 'no data: latchkey-sqlite and oidc-provider did not run d', why: 'null without either' },
    { id: 'rss-postgres-vs-redis', met: false, detail: '250 MB vs 300 MB = 0.83× (peaks in a and a)', why: 'not met, the variant’s 900 MB ignored' },
  ];
  for (const { id, met, detail, why } of cases) {
    it(`${id}: ${why}`, () => {
      assert.equal(byId(targets, id).met, met);
      assert.equal(byId(targets, id).detail, detail);
    });
  }

  it('describes the thresholds of the issue', () => {
    assert.equal(byId(targets, 'c-postgres-vs-redis').description, "c (client_credentials): latchkey-postgres at least 1.5× oidc-provider-redis's throughput with p99 no worse");
    assert.equal(byId(targets, 'c-sqlite-vs-memory').description, "c (client_credentials): latchkey-sqlite at least 1.5× oidc-provider's (in memory) throughput");
    assert.match(byId(targets, 'rss-postgres-vs-redis').description, /at most 0\.75× oidc-provider-redis's in the same run/);
  });

  describe('peak RSS of latchkey-postgres against oidc-provider-redis', () => {
    const rssCases = [
      {
        why: 'met at 0.75×, max over each side’s scenarios',
        runs: [...runsOf(pg, 'c', [1], { rssMb: 150 }), ...runsOf(pg, 'd', [1], { rssMb: 120 }), ...runsOf(redis, 'c', [1], { rssMb: 180 }), ...runsOf(redis, 'd', [1], { rssMb: 200 })],
        met: true,
        detail: '150 MB vs 200 MB = 0.75× (peaks in c and d)',
      },
      {
        why: 'not met at 0.94×',
        runs: [...runsOf(pg, 'c', [1, 1], { rssMb: [280, 291] }), ...runsOf(redis, 'a', [1], { rssMb: 308 })],
        met: false,
        detail: '291 MB vs 308 MB = 0.94× (peaks in c and a)',
      },
      {
        why: 'met, the variant ignored',
        runs: [...runsOf(pg, 'c', [1], { rssMb: 100 }), ...runsOf(variant, 'c', [1], { rssMb: 900 }), ...runsOf(redis, 'c', [1], { rssMb: 200 })],
        met: true,
        detail: '100 MB vs 200 MB = 0.50× (peaks in c and c)',
      },
      {
        why: 'null without the peer',
        runs: [...runsOf(pg, 'c', [1], { rssMb: 100 }), ...runsOf(memory, 'c', [1], { rssMb: 200 })],
        met: null,
        detail: 'no data: oidc-provider-redis did not run',
      },
      {
        why: 'null without RSS samples',
        runs: [...runsOf(pg, 'c', [1], { rssMb: null }), ...runsOf(redis, 'c', [1], { rssMb: 200 })],
        met: null,
        detail: 'no data: no RSS samples for latchkey-postgres',
      },
    ];
    for (const { why, runs, met, detail } of rssCases) {
      it(why, () => {
        const rss = byId(checkTargets(summarize(runs)), 'rss-postgres-vs-redis');
        assert.equal(rss.met, met);
        assert.equal(rss.detail, detail);
      });
    }
  });

  it('still judges baseline and list scaling for latchkey-sqlite', () => {
    const older = checkTargets(
      summarize([
        ...runsOf(lite, 'a', [2500]),
        ...runsOf('baseline', 'a', [10000]),
        ...runsOf(lite, 'b10k', [1250]),
        ...runsOf(lite, 'b100k', [1000]),
        // latchkey-postgres is not what these judge.
        ...runsOf(pg, 'a', [9000]),
      ]),
    );
    assert.equal(byId(older, 'a-vs-baseline').met, false);
    assert.match(byId(older, 'a-vs-baseline').detail, /^25\.0% of baseline \(2,500 vs 10,000 req\/s\)/);
    assert.equal(byId(older, 'b-list-scaling').met, false);
    assert.match(byId(older, 'b-list-scaling').detail, /^1\.25×/);
  });

  it('passes baseline and list scaling when within bounds', () => {
    const good = checkTargets(
      summarize([
        ...runsOf(lite, 'a', [3000]),
        ...runsOf('baseline', 'a', [10000]),
        ...runsOf(lite, 'b10k', [1100]),
        ...runsOf(lite, 'b100k', [1000]),
      ]),
    );
    assert.equal(byId(good, 'a-vs-baseline').met, true);
    assert.equal(byId(good, 'b-list-scaling').met, true);
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

  it('lists the targets of issue 32 with ✅, ❌ and –', () => {
    assert.match(table, /^Targets \(issue 32\):$/m);
    assert.doesNotMatch(table, /Targets for/);
    assert.match(table, /\| ✅ +\| a \(Bearer read\): latchkey-sqlite at least 1\.5× oidc-provider's \(in memory\) throughput +\| 2\.47× \(2\.40–2\.50×\), p99 0\.42× \(not judged\) +\|/);
    assert.match(table, /\| ❌ +\| a \(Bearer read\): at least 30% of the bare Fastify baseline/);
    assert.match(table, /\| – +\| c \(client_credentials\): latchkey-postgres at least 1\.5× oidc-provider-redis's throughput with p99 no worse +\| no data: latchkey-postgres and oidc-provider-redis did not run c +\|/);
  });

  it('computes ratios and targets itself when not given', () => {
    assert.equal(renderTable(summary, undefined, undefined, { latchkeyTarget: 'latchkey-sqlite' }), table);
  });

  it('puts a heading (the run\'s data, issue 47) above the table when given one', () => {
    const headed = renderTable(summary, undefined, undefined, { latchkeyTarget: 'latchkey-sqlite', heading: 'Data: one: 1 clients' });
    assert.equal(headed, `Data: one: 1 clients\n\n${table}`);
  });

  it('has no Redis column when the Redis peer did not run', () => {
    // The targets name it whether or not it ran; the results and their key do not.
    assert.doesNotMatch(table.slice(0, table.indexOf('Targets (issue 32):')), /oidc-provider-redis/);
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

    it('judges latchkey-postgres against oidc-provider-redis in the targets', () => {
      assert.match(redisTable, /\| ✅ +\| c \(client_credentials\): latchkey-postgres at least 1\.5× oidc-provider-redis's throughput with p99 no worse +\| 2\.00× \(1\.64–2\.44×\), p99 1\.00× +\|/);
      assert.match(redisTable, /\| ❌ +\| peak RSS under load of latchkey-postgres at most 0\.75× oidc-provider-redis's .*\| 100 MB vs 100 MB = 1\.00× \(peaks in c and c\) +\|/);
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

describe('renderCurveTable', () => {
  const curve = [
    { level: 200000, target: 'latchkey-postgres', scenario: 'a', rps: 9000.4, p99: 12.34, errors: 0, rssMb: 180.2 },
    { level: 1, target: 'oidc-provider-redis', scenario: 'f', rps: 4000, p99: 20, errors: 3, rssMb: 120 },
    { level: 1, target: 'latchkey-postgres', scenario: 'f', rps: 8000, p99: 9, errors: 0, rssMb: 150 },
    { level: 1, target: 'latchkey-postgres', scenario: 'a', rps: 11000, p99: 0.5, errors: 0, rssMb: 140 },
  ];
  const lines = renderCurveTable(curve).trimEnd().split('\n');

  it('has one row per level, target and scenario, in that order', () => {
    assert.match(lines[0], /^\| Live tokens \| Server +\| Scenario +\| +req\/s \| p99 ms \| errors \| RSS MB \|$/);
    assert.equal(lines.length, 2 + curve.length);
    assert.match(lines[2], /^\| +1 \| latchkey-postgres +\| a Bearer read +\| +11,000 \| +0\.50 \| +0 \| +140 \|$/);
    assert.match(lines[3], /^\| +1 \| latchkey-postgres +\| f Introspect +\|/);
    assert.match(lines[4], /^\| +1 \| oidc-provider-redis \| f Introspect +\| +4,000 \| +20\.0 \| +3 \|/);
    assert.match(lines[5], /^\| +200,000 \| latchkey-postgres +\| a Bearer read +\| +9,000 \| +12\.3 \| +0 \| +180 \|$/);
  });
});
