#!/usr/bin/env node
// `npm run test:cluster`: Latchkey as docker-compose.yml deploys it, without containers. Three
// instances on one PostgreSQL and one Redis (test/cluster/), every spec run twice (and one a third time), in these
// topologies (CLUSTER_TOPOLOGY):
// - nginx: nginx terminating TLS on loopback (deploy/nginx-*.conf), the instances straight on
//   PostgreSQL;
// - haproxy-pgbouncer: HAProxy in front (deploy/haproxy.cfg), PgBouncer in transaction mode between
//   the instances and PostgreSQL (deploy/pgbouncer.ini), the LISTEN connections straight to it;
// - haproxy-pgbouncer-session: the same with PgBouncer in session mode (named statements and LISTEN
//   through it), the shared-state spec only: the other mode of the table in docs/operations/connection-pooler.md, at little cost.
// Needs nginx, HAProxy, PgBouncer, openssl, and PostgreSQL and Redis on their usual local ports.
// CLUSTER_TOPOLOGY=<name> runs one topology only. Extra arguments go to Jest.
//
// The certificate is made here, before Jest starts, because Node reads NODE_EXTRA_CA_CERTS only at
// start-up: that is how fetch in the tests trusts the proxy without switching off verification.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const TOPOLOGIES = {
  nginx: '3 instances behind nginx, PostgreSQL, Redis',
  'haproxy-pgbouncer': '3 instances behind HAProxy, PgBouncer (transaction mode) to PostgreSQL, Redis',
  'haproxy-pgbouncer-session': '3 instances behind HAProxy, PgBouncer (session mode) to PostgreSQL, Redis: shared state only',
  // Not run by default: one change at a time, when a combination above fails.
  haproxy: '3 instances behind HAProxy, PostgreSQL, Redis',
  'nginx-pgbouncer': '3 instances behind nginx, PgBouncer (transaction mode) to PostgreSQL, Redis',
};
const chosen = process.env.CLUSTER_TOPOLOGY ? [process.env.CLUSTER_TOPOLOGY] : ['nginx', 'haproxy-pgbouncer', 'haproxy-pgbouncer-session'];
/** Topologies that run some specs only (unless Jest arguments choose). */
const ONLY = { 'haproxy-pgbouncer-session': ['shared-state'] };
if (!chosen.every((topology) => topology in TOPOLOGIES)) {
  console.error(`test-cluster: unknown CLUSTER_TOPOLOGY ${process.env.CLUSTER_TOPOLOGY} (${Object.keys(TOPOLOGIES).join(', ')})`);
  process.exit(1);
}
// The programs a topology runs are its name's parts (Debian's packages of the same names).
const missing = [...new Set(chosen.flatMap((t) => t.split('-')).filter((part) => part !== 'session'))].filter((p) => !existsSync(`/usr/sbin/${p}`) && spawnSync(p, ['-V']).error);
if (missing.length > 0) {
  console.error(`test-cluster: ${missing.join(' and ')} not found (apt-get install ${missing.join(' ')})`);
  process.exit(1);
}

const dir = mkdtempSync(join(tmpdir(), 'latchkey-cluster-'));
// nginx's workers run as an unprivileged user when CI runs as root, and so does PgBouncer (it
// refuses root): they read and write below here.
chmodSync(dir, 0o755);
const cert = join(dir, 'cert.pem');
const key = join(dir, 'key.pem');

function run(command, args) {
  const result = spawnSync(command, args, { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' });
  if (result.status !== 0) {
    console.error(`test-cluster: ${command} ${args.join(' ')} failed (${result.error?.message ?? `exit ${result.status}`})\n${result.stdout ?? ''}${result.stderr ?? ''}`);
    process.exit(1);
  }
}

/** Processes the tests started in `runDir` and could not stop (a crashed Jest): ended by their recorded pid. */
function stopLeftovers(runDir) {
  for (const file of readdirSync(runDir).filter((f) => f.endsWith('.pid'))) {
    const pid = Number(readFileSync(join(runDir, file), 'utf8').trim());
    // Only if that pid still runs a process of this run (pids are reused): nginx, HAProxy and
    // PgBouncer name the directory on their command line, the instances carry CLUSTER_DIR in their environment.
    const read = (name) => (existsSync(`/proc/${pid}/${name}`) ? readFileSync(`/proc/${pid}/${name}`, 'utf8') : '');
    if (pid > 0 && (read('cmdline').includes(runDir) || read('environ').split('\0').includes(`CLUSTER_DIR=${runDir}`))) {
      try {
        process.kill(pid, 'SIGKILL');
        console.error(`test-cluster: stopped leftover process ${pid} (${file})`);
      } catch {
        // already gone
      }
    }
  }
}

run('npm', ['run', '-s', 'build']);
run('openssl', [
  'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2',
  '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', key, '-out', cert,
]);

const jest = [
  '--experimental-vm-modules', '--no-warnings=ExperimentalWarning', 'node_modules/jest/bin/jest.js',
  '--runInBand', '--config', 'test/cluster/jest.config.js', ...process.argv.slice(2),
];
// Every topology runs, also after one failed: a CI run then says which of them fail.
const outcomes = chosen.map((topology, index) => {
  // A directory per topology: its logs, configurations and pid files.
  const runDir = join(dir, topology);
  mkdirSync(runDir, { mode: 0o755 });
  chmodSync(runDir, 0o755);
  console.log(`\n=== Cluster test ${index + 1}/${chosen.length} (${topology}): ${TOPOLOGIES[topology]} ===\n`);
  const started = Date.now();
  const args = process.argv.length > 2 ? [] : (ONLY[topology] ?? []);
  const result = spawnSync(process.execPath, [...jest, ...args], {
    stdio: 'inherit',
    // A topology takes about 5 minutes; a Jest that hangs past this ends here, and CI goes on.
    timeout: 20 * 60_000,
    killSignal: 'SIGKILL',
    env: { ...process.env, NODE_EXTRA_CA_CERTS: cert, CLUSTER_DIR: runDir, CLUSTER_CERT: cert, CLUSTER_KEY: key, CLUSTER_TOPOLOGY: topology },
  });
  stopLeftovers(runDir);
  if (result.error) console.error(`test-cluster: ${topology}: ${result.error.message}`);
  return { topology, passed: result.status === 0, seconds: Math.round((Date.now() - started) / 1000) };
});

console.log(`\n=== Cluster test: ${outcomes.map((o) => `${o.topology} ${o.passed ? 'passed' : 'FAILED'} in ${o.seconds} s`).join(', ')} ===`);
const passed = outcomes.every((o) => o.passed);
if (passed) rmSync(dir, { recursive: true, force: true });
else console.error(`test-cluster: logs and configuration kept in ${dir}`);
process.exit(passed ? 0 : 1);
