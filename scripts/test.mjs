#!/usr/bin/env node
// The test suite in tiers (docs/development.md):
//
//   npm run test:unit       pure logic: no server, no database, no build (seconds)
//   npm test                what every change must pass: unit, integration, e2e and the attack
//                           tests on SQLite, the browser test, and again on PostgreSQL when
//                           TEST_DATABASE_URL is set; the Redis test when TEST_REDIS_URL is set
//   npm run test:security   the long fuzz and timing runs (SQLite, and PostgreSQL when set)
//
// Each group runs in its own Jest process, so a group whose dependency is missing (no browser, no
// Redis) fails alone and the others still run; every group runs, and a summary ends the output.
// Extra arguments go to every Jest run (e.g. `npm test -- -t "refresh"`).
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { delimiter, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

// The first argument names a tier when it is one; everything else goes to Jest.
const TIERS = ['unit', 'all', 'security'];
const argv = process.argv.slice(2);
const tier = TIERS.includes(argv[0]) ? argv[0] : 'all';
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

const groups = [];
const notes = [];
if (tier === 'unit') {
  groups.push({ name: 'unit', env: sqlite, args: unitFiles() });
} else if (tier === 'all') {
  const skip = [...LONG, ...BROWSER, ...(redis ? [] : REDIS)];
  groups.push({ name: 'unit', env: sqlite, args: unitFiles() });
  groups.push({ name: 'integration and e2e on SQLite', env: sqlite, args: serverFiles(skip), build: true });
  groups.push({ name: 'browser (Chromium) on SQLite', env: sqlite, args: serverFiles([], BROWSER), build: true });
  if (postgres) groups.push({ name: 'integration and e2e on PostgreSQL', env: postgres, args: serverFiles(skip), build: true });
  else notes.push('PostgreSQL: not run (set TEST_DATABASE_URL, e.g. postgres://postgres@127.0.0.1:5432/test)');
  if (!redis) notes.push('Redis (test/e2e/rate-limits-redis): not run (set TEST_REDIS_URL, e.g. redis://127.0.0.1:6379)');
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
  if (present()) return;
  const packages = ['simplesamlphp', 'php-cli', 'php-xml', 'php-mbstring'];
  if (process.getuid?.() !== 0) {
    console.error(`latchkey: the SAML tests need SimpleSAMLphp and PHP; run as root: apt-get install -y ${packages.join(' ')}`);
    return;
  }
  console.log(`\n=== Installing ${packages.join(' ')} (Debian) for the SAML tests ===\n`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const install = () => spawnSync('apt-get', ['install', '-y', '-q', ...packages], { stdio: 'ignore', env }).status === 0;
  if (!install()) {
    spawnSync('apt-get', ['update', '-q'], { stdio: 'inherit', env });
    if (!install()) console.error('latchkey: apt-get could not install SimpleSAMLphp; the SAML tests will fail');
  }
}

// One Jest process runs a whole group in band, and Jest's ESM module registry keeps each file's
// modules until the process ends (about 30 MB a file with the app's dependencies): the default
// heap limit (about 4 GB here) ran out in the SQLite group once it held some 170 files.
const jest = ['--experimental-vm-modules', '--no-warnings=ExperimentalWarning', '--max-old-space-size=10240', 'node_modules/jest/bin/jest.js', '--runInBand'];
const results = [];
for (const group of groups) {
  console.log(`\n=== ${group.name} ===\n`);
  const started = Date.now();
  const run = spawnSync(process.execPath, [...jest, ...jestArgs, ...group.args], { stdio: 'inherit', env: group.env });
  results.push({ name: group.name, ok: run.status === 0, seconds: (Date.now() - started) / 1000 });
}

console.log('\n=== Summary ===');
for (const r of results) console.log(`${r.ok ? 'passed' : 'FAILED'}  ${r.name} (${r.seconds.toFixed(0)} s)`);
for (const note of notes) console.log(`note    ${note}`);
process.exit(results.every((r) => r.ok) ? 0 : 1);
