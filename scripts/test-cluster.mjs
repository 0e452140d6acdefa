#!/usr/bin/env node
// `npm run test:cluster`: Latchkey as docker-compose.yml deploys it, without containers. Three
// instances on one PostgreSQL and one Redis, behind nginx terminating TLS on loopback
// (test/cluster/). Needs nginx, openssl, and PostgreSQL and Redis on their usual local ports.
// Extra arguments go to Jest.
//
// The certificate is made here, before Jest starts, because Node reads NODE_EXTRA_CA_CERTS only at
// start-up: that is how fetch in the tests trusts nginx without switching off verification.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const dir = mkdtempSync(join(tmpdir(), 'latchkey-cluster-'));
// nginx's workers run as an unprivileged user when CI runs as root; they keep temp files below here.
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

/** Processes the tests started and could not stop (a crashed Jest): ended by their recorded pid. */
function stopLeftovers() {
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.pid'))) {
    const pid = Number(readFileSync(join(dir, file), 'utf8').trim());
    // Only if that pid still runs a process of this run (pids are reused): nginx names the directory on
    // its command line, the instances carry CLUSTER_DIR in their environment.
    const read = (name) => (existsSync(`/proc/${pid}/${name}`) ? readFileSync(`/proc/${pid}/${name}`, 'utf8') : '');
    if (pid > 0 && (read('cmdline').includes(dir) || read('environ').split('\0').includes(`CLUSTER_DIR=${dir}`))) {
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
console.log('\n=== Cluster test: 3 instances behind nginx, PostgreSQL, Redis ===\n');
const result = spawnSync(process.execPath, jest, {
  stdio: 'inherit',
  env: { ...process.env, NODE_EXTRA_CA_CERTS: cert, CLUSTER_DIR: dir, CLUSTER_CERT: cert, CLUSTER_KEY: key },
});
stopLeftovers();
if (result.status === 0) rmSync(dir, { recursive: true, force: true });
else console.error(`test-cluster: logs and configuration kept in ${dir}`);
process.exit(result.status ?? 1);
