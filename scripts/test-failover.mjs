#!/usr/bin/env node
// `npm run test:failover`: Latchkey on a PostgreSQL that fails over (test/failover/). Two instances
// on a Patroni cluster of two PostgreSQL 15 nodes (synchronous replication, one etcd), reached
// through HAProxy routing to the leader (deploy/haproxy-postgres.cfg), all on loopback in a
// directory of its own; the test crashes the leader's PostgreSQL, then kills the leader's whole
// host, under load. Needs root (PostgreSQL runs as the `postgres` user) and Debian's etcd-server,
// patroni, haproxy and postgresql-15; nothing else (no nginx, not the machine's PostgreSQL). Redis
// on its usual port, as for the cluster test. Extra arguments go to Jest.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';

// What the test runs, and the Debian package each comes from (CI: apt-get install -y pgbouncer haproxy patroni etcd-server).
const REQUIRED = [
  { command: 'etcd', pkg: 'etcd-server' },
  { command: 'patroni', pkg: 'patroni' },
  { command: 'haproxy', pkg: 'haproxy' },
  { command: 'setpriv', pkg: 'util-linux' },
  { command: '/usr/lib/postgresql/15/bin/postgres', pkg: 'postgresql-15' },
];
// haproxy lives in /usr/sbin, which a non-login shell's PATH may lack.
const PATH = [...(process.env.PATH ?? '').split(delimiter), '/usr/sbin', '/sbin'].filter(Boolean).join(delimiter);
const found = (command) => (command.includes('/') ? existsSync(command) : PATH.split(delimiter).some((dir) => existsSync(join(dir, command))));
const missing = REQUIRED.filter((r) => !found(r.command));
if (missing.length > 0) {
  console.error(`test-failover: missing ${missing.map((m) => `${m.command} (Debian package ${m.pkg})`).join(', ')}.\nInstall: apt-get install -y ${[...new Set(missing.map((m) => m.pkg))].join(' ')}`);
  process.exit(1);
}
if (process.getuid?.() !== 0 || spawnSync('id', ['-u', 'postgres']).status !== 0) {
  console.error('test-failover: run as root, with a `postgres` user (Debian package postgresql-common): PostgreSQL refuses to run as root, so the test starts it as that user.');
  process.exit(1);
}

const dir = mkdtempSync(join(tmpdir(), 'latchkey-failover-'));
// The `postgres` user must reach its nodes' directories inside it.
chmodSync(dir, 0o755);

function run(command, args) {
  const result = spawnSync(command, args, { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' });
  if (result.status !== 0) {
    console.error(`test-failover: ${command} ${args.join(' ')} failed (${result.error?.message ?? `exit ${result.status}`})\n${result.stdout ?? ''}${result.stderr ?? ''}`);
    stopLeftovers();
    rmSync(dir, { recursive: true, force: true });
    process.exit(1);
  }
}

const read = (path) => (existsSync(path) ? readFileSync(path, 'utf8') : '');
/** Whether `pid` is still a process of this run (pids are reused): its command line or environment names the directory. */
const ofThisRun = (pid) => pid > 0 && (read(`/proc/${pid}/cmdline`).includes(dir) || read(`/proc/${pid}/environ`).split('\0').includes(`CLUSTER_DIR=${dir}`));
const signal = (pid, name, file) => {
  try {
    process.kill(pid, name);
    console.error(`test-failover: stopped leftover process ${pid} (${file}, ${name})`);
  } catch {
    // already gone
  }
};

/**
 * Processes the test started and could not stop (a crashed Jest, an interrupted run), by their
 * recorded pid: first those of the pid files (Patroni, so that nobody restarts PostgreSQL; etcd,
 * HAProxy, the instances), then each node's postmaster, from PostgreSQL's own postmaster.pid.
 * SIGQUIT is PostgreSQL's immediate shutdown: the postmaster ends its backends, then itself.
 */
function stopLeftovers() {
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.pid'))) {
    const pid = Number(read(join(dir, file)).trim());
    if (ofThisRun(pid)) signal(pid, 'SIGKILL', file);
  }
  for (const node of readdirSync(dir).filter((f) => existsSync(join(dir, f, 'data', 'postmaster.pid')))) {
    const pid = Number(read(join(dir, node, 'data', 'postmaster.pid')).split('\n')[0]);
    if (!ofThisRun(pid)) continue;
    signal(pid, 'SIGQUIT', `${node}/data/postmaster.pid`);
    const deadline = Date.now() + 5000;
    while (existsSync(`/proc/${pid}`) && Date.now() < deadline) spawnSync('sleep', ['0.1']);
    if (existsSync(`/proc/${pid}`)) signal(pid, 'SIGKILL', `${node}/data/postmaster.pid`);
  }
}

/** The databases are removed whatever happened; on failure the logs and configurations stay. */
function removeData() {
  for (const entry of readdirSync(dir)) {
    if (entry === 'etcd-data') rmSync(join(dir, entry), { recursive: true, force: true });
    else if (existsSync(join(dir, entry, 'data'))) rmSync(join(dir, entry, 'data'), { recursive: true, force: true });
  }
}

// An interrupted run (Ctrl-C reaches Jest too) still ends here, with its processes stopped.
process.on('SIGINT', () => {});
process.on('SIGTERM', () => {});

run('npm', ['run', '-s', 'build']);

const jest = [
  '--experimental-vm-modules', '--no-warnings=ExperimentalWarning', 'node_modules/jest/bin/jest.js',
  '--runInBand', '--config', 'test/failover/jest.config.js', ...process.argv.slice(2),
];
console.log('\n=== Failover test: 2 instances, HAProxy, Patroni (2 × PostgreSQL 15, synchronous), etcd ===\n');
const result = spawnSync(process.execPath, jest, {
  stdio: 'inherit',
  // The run takes about 3 minutes; a Jest that hangs past this ends here, and CI goes on.
  timeout: 15 * 60_000,
  killSignal: 'SIGKILL',
  // test/cluster/support/settings.ts (shared with the cluster test) wants a certificate and key:
  // this test has no TLS proxy (its requests go to the instances as nginx would pass them).
  env: { ...process.env, PATH, CLUSTER_DIR: dir, CLUSTER_CERT: 'unused', CLUSTER_KEY: 'unused' },
});
if (result.error) console.error(`test-failover: ${result.error.message}`);
stopLeftovers();
if (result.status === 0) {
  rmSync(dir, { recursive: true, force: true });
} else {
  removeData();
  console.error(`test-failover: logs and configuration kept in ${dir}`);
}
process.exit(result.status ?? 1);
