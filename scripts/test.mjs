#!/usr/bin/env node
// The test suite in tiers (docs/development.md):
//
//   npm run test:unit       pure logic: no server, no database, no build (seconds)
//   npm test                does this checkout work? (under 3 minutes on a 2-core machine): the unit
//                           tests, one end-to-end file per capability on SQLite (QUICK below), the
//                           docs and architecture checks, and the browser sign-in in Chromium
//   npm run test:all        everything CI runs (.ci/run): every file on SQLite, in Chromium, and on
//                           PostgreSQL when TEST_DATABASE_URL is set; Redis when TEST_REDIS_URL is
//                           set; the fuzz and timing runs; then, as root, the failover test
//                           (Patroni) and the cluster test (nginx, HAProxy, PgBouncer)
//   npm run test:security   the fuzz and timing runs alone
//
// Each group runs in its own Jest process, so a group whose dependency is missing (no browser, no
// Redis) fails alone and the others still run; every group runs, and a summary ends the output.
// Extra arguments go to every Jest run (e.g. `npm test -- -t "refresh"`).
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

// The first argument names a tier when it is one; everything else goes to Jest.
const TIERS = ['unit', 'quick', 'all', 'security'];
const argv = process.argv.slice(2);
const tier = TIERS.includes(argv[0]) ? argv[0] : 'quick';
const jestArgs = TIERS.includes(argv[0]) ? argv.slice(1) : argv;

// The tests run on the Node release of .nvmrc, the one CI tests and the Docker image ships. On a
// machine with another Node (Debian's 20, say), scripts/use-node.sh fetches that release from the
// npm registry once, and this script runs again under it. node_modules does not need reinstalling:
// the one native addon, better-sqlite3 13, uses Node-API, whose binaries work on any release.
const wanted = readFileSync(new URL('../.nvmrc', import.meta.url), 'utf8').trim().replace(/^v/, '');
if (process.versions.node.split('.')[0] !== wanted.split('.')[0] && !process.env.LATCHKEY_TEST_NODE_SWITCHED) {
  const found = spawnSync('bash', ['-c', '. scripts/use-node.sh >&2 && command -v node'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  const node = found.status === 0 ? found.stdout.trim() : '';
  if (node) {
    console.log(`This is Node ${process.version}; running the tests on Node ${wanted} (.nvmrc), as CI does.`);
    const rerun = spawnSync(node, [fileURLToPath(import.meta.url), tier, ...jestArgs], { stdio: 'inherit', env: { ...process.env, PATH: `${dirname(node)}${delimiter}${process.env.PATH}`, LATCHKEY_TEST_NODE_SWITCHED: '1' },
    });
    process.exit(rerun.status ?? 1);
  }
  // Running on this line tests nothing: the server and the CLI stop with their own line
  // (src/runtime/node-line.ts), and the SQLite driver kills Jest's workers ("Segmentation fault").
  console.error(`latchkey: this is Node ${process.versions.node}; Latchkey needs Node ${wanted.split('.')[0]} (.nvmrc), which could not be fetched (above). Run: . scripts/use-node.sh   once the npm registry answers, then npm test again`);
  process.exit(1);
}

// Jest 30 reads these as regular expressions over the file's path.
const UNIT = ['/src/.*\\.spec\\.ts$', '/test/.*/support/.*\\.spec\\.ts$'];
const LONG = ['/test/security/fuzz-[^/]*\\.e2e-spec\\.ts$', '/test/security/timing\\.e2e-spec\\.ts$'];
const BROWSER = ['/test/browser/'];
const REDIS = ['/test/e2e/rate-limits-redis\\.e2e-spec\\.ts$'];
// What does not touch the database under test runs in the SQLite group only: `npm ci` in a copy of
// the project and the npm commands a newcomer types after it (about 270 s, the longest file), and
// the CLI's bin entry, which marks the shared dist/ stale to see it rebuilt (two groups at once
// would race for that rebuild).
const DATABASE_AGNOSTIC = ['/test/integration/node-link-sequence\\.spec\\.ts$', '/test/integration/cli-bin-entry\\.spec\\.ts$'];

const sqlite = { ...process.env, TEST_DATABASE_URL: '' };
const postgres = process.env.TEST_DATABASE_URL ? process.env : undefined;
const redis = Boolean(process.env.TEST_REDIS_URL);

/** The Jest arguments for: the unit files, or every file but the unit ones, minus `exclude`. */
const unitFiles = () => ['--testPathPatterns', ...UNIT];
const serverFiles = (exclude, only) => [
  ...(only ? ['--testPathPatterns', ...only] : []),
  '--testPathIgnorePatterns',
  '/node_modules/',
  ...UNIT,
  ...exclude,
];

/**
 * `npm test`'s slice: one file per capability, chosen among the fast ones, so that a checkout that
 * breaks a capability fails here in minutes; test:all runs every file, on both databases.
 */
const QUICK = [
  'test/docs/', 'test/architecture/',
  // The authorization server: code flow with login and consent, the token endpoint, refresh, MAC tokens, registration, revocation and introspection.
  'test/e2e/authorization-code-flow', 'test/e2e/token-endpoint', 'test/e2e/refresh-token', 'test/e2e/mac-tokens', 'test/e2e/registration',
  'test/e2e/revocation-introspection',
  // Stock client libraries, OpenID Connect, PAR, DPoP, devices, token exchange.
  'test/e2e/oauth4webapi\\.', 'test/e2e/openid-connect', 'test/e2e/pushed-authorization-requests', 'test/e2e/dpop-proofs',
  'test/e2e/device-authorization\\.', 'test/e2e/token-exchange\\.',
  // The resource server, second factors, federation, SCIM, groups, email, the admin API and console, operations.
  'test/e2e/resources-crud', 'test/e2e/second-factor\\.', 'test/e2e/federation-oidc', 'test/e2e/scim-access', 'test/e2e/groups-access',
  'test/e2e/mail-flows', 'test/e2e/admin-access', 'test/e2e/admin-console\\.', 'test/e2e/account-page', 'test/e2e/health', 'test/e2e/malformed-input',
  // The attacker's view.
  'test/security/scope-escalation', 'test/security/cross-user-access',
].map((path) => `/${path}`);
const QUICK_BROWSER = ['/test/browser/authorization-flow'];

const groups = [];
const notes = [];
if (tier === 'unit') {
  groups.push({ name: 'unit', env: sqlite, args: unitFiles() });
} else if (tier === 'quick') {
  groups.push({ name: 'unit', env: sqlite, args: unitFiles() });
  // Two files at a time: each has its own SQLite file and its servers on ports of their own, and
  // much of a file's time is spent waiting (on argon2 in the servers it starts, on sockets).
  groups.push({ name: 'one end-to-end file per capability, docs and architecture checks, on SQLite', env: sqlite, args: [...serverFiles([], QUICK), '--maxWorkers=2'], build: true });
  groups.push({ name: 'browser sign-in (Chromium) on SQLite', env: sqlite, args: serverFiles([], QUICK_BROWSER), build: true });
  notes.push('This was the quick tier: npm run test:all runs every test, on SQLite and PostgreSQL, with the cluster and failover tests (what CI runs)');
} else if (tier === 'all') {
  const skip = [...LONG, ...BROWSER, ...(redis ? [] : REDIS)];
  groups.push({ name: 'unit', env: sqlite, args: unitFiles() });
  groups.push({ name: 'integration and e2e on SQLite', env: sqlite, args: serverFiles(skip), build: true });
  // The two databases' runs share nothing (a file's own SQLite file, or its own PostgreSQL schema;
  // servers on free ports; Redis keys under a random prefix), so they run at the same time: each
  // is one Jest process in band, much of whose time is spent waiting. Within one database the
  // files stay in band: some cut PostgreSQL connections by application name (row-caches), which
  // would cut a neighbour's.
  if (postgres) groups.push({ name: 'integration and e2e on PostgreSQL', env: postgres, args: serverFiles([...skip, ...DATABASE_AGNOSTIC]), build: true, alongside: true });
  groups.push({ name: 'browser (Chromium) on SQLite', env: sqlite, args: serverFiles([], BROWSER), build: true });
  if (!postgres) notes.push('PostgreSQL: not run (set TEST_DATABASE_URL, e.g. postgres://postgres@127.0.0.1:5432/test)');
  if (!redis) notes.push('Redis (test/e2e/rate-limits-redis): not run (set TEST_REDIS_URL, e.g. redis://127.0.0.1:6379)');
  groups.push({ name: 'fuzz and timing on SQLite', env: sqlite, args: serverFiles([], LONG), build: true });
  if (postgres) groups.push({ name: 'fuzz and timing on PostgreSQL', env: postgres, args: serverFiles([], LONG), build: true });
  // The real deployments: they need root and Debian's packages (installed below), and stop and
  // restart the machine's PostgreSQL (the cluster test), so they run last.
  if (postgres && redis) {
    groups.push({ name: 'failover (Patroni, etcd, HAProxy)', script: 'scripts/test-failover.mjs', packages: ['haproxy', 'patroni', 'etcd-server'] });
    groups.push({ name: 'cluster (nginx, HAProxy, PgBouncer)', script: 'scripts/test-cluster.mjs', packages: ['nginx-light', 'haproxy', 'pgbouncer'] });
  } else notes.push('failover and cluster tests: not run (they need TEST_DATABASE_URL and TEST_REDIS_URL, and root)');
} else {
  groups.push({ name: 'fuzz and timing on SQLite', env: sqlite, args: serverFiles([], LONG), build: true });
  if (postgres) groups.push({ name: 'fuzz and timing on PostgreSQL', env: postgres, args: serverFiles([], LONG), build: true });
  else notes.push('PostgreSQL: not run (set TEST_DATABASE_URL)');
}

// The SAML tests (test/e2e/federation-saml) sign in at a real identity provider: Debian's
// SimpleSAMLphp under PHP's built-in server. Like Node above, it is fetched when missing (from
// Debian's packages, as root), so that `npm ci && npm test` needs nothing installed by hand.
if (groups.some((g) => g.build) && tier === 'all') ensureSimpleSamlPhp();

// The e2e tests start `node dist/src/main.js` and the CLI as real processes: build once, first.
if (groups.some((g) => g.build)) {
  console.log('\n=== Build (tsc) ===\n');
  const build = spawnSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'], { stdio: 'inherit' });
  if (build.status !== 0) process.exit(build.status ?? 1);
}

function ensureSimpleSamlPhp() {
  const present = () => existsSync('/usr/share/simplesamlphp/www') && spawnSync('php', ['-m'], { encoding: 'utf8' }).stdout?.split('\n').includes('dom');
  if (!present()) installDebianPackages(['simplesamlphp', 'php-cli', 'php-xml', 'php-mbstring'], 'the SAML tests');
}

/** Installs Debian packages (as root) that a group needs and the machine lacks; otherwise says what to install. */
function installDebianPackages(packages, purpose) {
  const installed = (pkg) => spawnSync('dpkg-query', ['-W', '-f', '${Status}', pkg], { encoding: 'utf8' }).stdout?.includes('install ok installed');
  const missing = packages.filter((pkg) => !installed(pkg));
  if (missing.length === 0) return;
  if (process.getuid?.() !== 0) {
    console.error(`latchkey: ${purpose} need ${missing.join(', ')}; run as root: apt-get install -y ${missing.join(' ')}`);
    return;
  }
  console.log(`\n=== Installing ${missing.join(' ')} (Debian) for ${purpose} ===\n`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const install = () => spawnSync('apt-get', ['install', '-y', '-q', ...missing], { stdio: 'ignore', env }).status === 0;
  if (!install()) {
    spawnSync('apt-get', ['update', '-q'], { stdio: 'inherit', env });
    if (!install()) console.error(`latchkey: apt-get could not install ${missing.join(' ')}; ${purpose} will fail`);
  }
}

// One Jest process runs a whole group in band, and Jest's ESM module registry keeps each file's
// modules until the process ends (about 30 MB a file with the app's dependencies): the default
// heap limit (about 4 GB here) ran out in the SQLite group once it held some 170 files.
const jest = ['--experimental-vm-modules', '--no-warnings=ExperimentalWarning', '--max-old-space-size=10240', 'node_modules/jest/bin/jest.js'];
const results = [];
// Each Jest group also writes its results as JSON, for the summary's slowest files: where the
// suite's time goes, in every run's log (CI's included), without another run to find out.
const resultsDir = mkdtempSync(join(tmpdir(), 'latchkey-test-results-'));
for (let index = 0; index < groups.length; index++) {
  // A group marked `alongside` runs at the same time as the one before it; its output is kept in a
  // file and printed once both have finished, so that neither's output is interleaved.
  const stage = [groups[index]];
  while (groups[index + 1]?.alongside) stage.push(groups[++index]);
  results.push(...(await Promise.all(stage.map((group, position) => runGroup(group, `${index}-${position}`, position === 0)))));
  for (const group of stage.slice(1)) {
    console.log(`\n=== ${group.name} (ran alongside ${stage[0].name}) ===\n`);
    process.stdout.write(readFileSync(group.log, 'utf8'));
  }
}

/** Runs one group: its output to this terminal (`streamed`) or to a file, printed later. */
async function runGroup(group, id, streamed) {
  if (streamed) console.log(`\n=== ${group.name} ===\n`);
  else console.log(`\n(${group.name} runs alongside; its output follows when both have finished)\n`);
  const started = Date.now();
  if (group.packages) installDebianPackages(group.packages, `the ${group.name} test`);
  const inBand = group.args?.some((arg) => arg.startsWith('--maxWorkers')) ? [] : ['--runInBand'];
  const json = join(resultsDir, `${id}.json`);
  const args = group.script ? [group.script, ...jestArgs] : [...jest, ...inBand, '--json', `--outputFile=${json}`, ...jestArgs, ...group.args];
  group.log = join(resultsDir, `${id}.log`);
  const output = streamed ? 'inherit' : openSync(group.log, 'w');
  const status = await new Promise((resolve) => {
    spawn(process.execPath, args, { stdio: ['ignore', output, output], env: group.env ?? process.env })
      .on('error', () => resolve(1))
      .on('exit', (code, signal) => resolve(signal ? 1 : code));
  });
  if (!streamed) closeSync(output);
  return { name: group.name, ok: status === 0, seconds: (Date.now() - started) / 1000, files: group.script ? [] : fileTimes(json) };
}

/** [file, seconds] of one Jest run's JSON results (none when Jest wrote none). */
function fileTimes(path) {
  if (!existsSync(path)) return [];
  const { testResults } = JSON.parse(readFileSync(path, 'utf8'));
  return testResults.map((file) => [relative(process.cwd(), file.name), (file.endTime - file.startTime) / 1000]);
}

console.log('\n=== Summary ===');
for (const r of results) console.log(`${r.ok ? 'passed' : 'FAILED'}  ${r.name} (${r.seconds.toFixed(0)} s)`);
const slowest = results.flatMap((r) => r.files.map(([file, seconds]) => ({ file, seconds, group: r.name }))).sort((a, b) => b.seconds - a.seconds).slice(0, 12);
if (slowest.length > 0) console.log(`slowest files:\n${slowest.map((f) => `  ${f.seconds.toFixed(0).padStart(4)} s  ${f.file}  (${f.group})`).join('\n')}`);
for (const note of notes) console.log(`note    ${note}`);
process.exit(results.every((r) => r.ok) ? 0 : 1);
