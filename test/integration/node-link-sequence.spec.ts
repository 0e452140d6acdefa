import { spawn, spawnSync, type ChildProcess, type SpawnSyncReturns } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { REQUIRED_NODE_MAJOR, wrongNodeLine } from '../../src/runtime/node-line.js';
import { PROJECT } from '../helpers/cli.js';
import { freePort } from '../helpers/free-port.js';
import { major, NODE_CACHE, NVMRC, otherLineNode, pathWithoutOurNodes, type MachineNode } from '../helpers/machine-node.js';

/**
 * Issue 31, as a new user meets it: a fresh copy of the project on a machine whose own Node is on
 * another line (Debian's Node 20; the same on CI), `npm ci`, then every npm command a person runs
 * later. Each runs the package's postinstall again (scripts/link-node.sh), with node_modules/.bin
 * first on PATH; the link to Node 24 there must survive all of them, and `npm start` then answer.
 * Started on the wrong Node, the server and the CLI say so in one line instead of crashing.
 */

const WANTED = major(NVMRC);

/** The one line of a process on another Node, as typed by hand (`node dist/src/main.js`) and as run by npm. */
const byHand = (version: string) =>
  `latchkey: this is Node ${version}; Latchkey needs Node ${WANTED} (.nvmrc). Run: . scripts/use-node.sh   (Node ${WANTED} first on PATH in this shell), then the same command again`;
const byNpm = (version: string) =>
  `latchkey: this is Node ${version}; Latchkey needs Node ${WANTED} (.nvmrc). Run: npm run postinstall   (it links Node ${WANTED} as node_modules/.bin/node for npm start, npm test and npx latchkey)`;

describe('the Node line check (src/runtime/node-line.ts)', () => {
  it('needs the major of .nvmrc and of package.json engines', () => {
    const engines = (JSON.parse(readFileSync(join(PROJECT, 'package.json'), 'utf8')) as { engines: { node: string } }).engines.node;
    expect(REQUIRED_NODE_MAJOR).toBe(WANTED);
    expect(engines).toMatch(new RegExp(`^\\^${WANTED}\\.`));
  });

  it('passes any release of that line and names the fix for the others', () => {
    expect(wrongNodeLine({ version: `${WANTED}.0.0`, startedByNpm: true, useNode: 'scripts/use-node.sh' })).toBeNull();
    expect(wrongNodeLine({ version: '20.20.2', startedByNpm: false, useNode: 'scripts/use-node.sh' })).toBe(byHand('20.20.2'));
    expect(wrongNodeLine({ version: '26.1.0', startedByNpm: true, useNode: 'scripts/use-node.sh' })).toBe(byNpm('26.1.0'));
    expect(wrongNodeLine({ version: '20.20.2', startedByNpm: true, useNode: null })).toBe(`latchkey: this is Node 20.20.2; Latchkey needs Node ${WANTED} (.nvmrc). Install Node ${WANTED}`);
  });
});

describe("a fresh copy on a machine with another Node: npm ci, then every later npm command (issue 31)", () => {
  const STEP = 10 * 60_000;
  let copy: string;
  let machine: MachineNode;
  /** A shell of a new user: the machine's own Node first on PATH, none of Latchkey's, no npm variables. */
  let env: NodeJS.ProcessEnv;
  const link = () => join(copy, 'node_modules', '.bin', 'node');

  /** Runs a command line in the copy, in that shell; fails with its output unless it exits with 0. */
  const sh = (command: string, extra: NodeJS.ProcessEnv = {}): SpawnSyncReturns<string> => {
    const result = spawnSync('bash', ['-c', command], { cwd: copy, env: { ...env, ...extra }, encoding: 'utf8', timeout: STEP });
    if (result.status !== 0) throw new Error(`\`${command}\` exited with ${result.status ?? result.signal}:\n${result.stdout}\n${result.stderr}`);
    return result;
  };
  /** Runs a command line expected to fail; its exit status and output. */
  const fails = (command: string, extra: NodeJS.ProcessEnv = {}) => spawnSync('bash', ['-c', command], { cwd: copy, env: { ...env, ...extra }, encoding: 'utf8', timeout: STEP });

  /** node_modules/.bin/node is use-node.sh's release of .nvmrc, and npm's scripts run on it. */
  const expectLinked = () => {
    expect(lstatSync(link()).isSymbolicLink()).toBe(true);
    expect(realpathSync(link())).toBe(realpathSync(join(NODE_CACHE, `node-v${NVMRC}`, 'bin', 'node')));
    expect(sh('npm exec -c "node -p process.versions.node"').stdout.trim()).toBe(NVMRC);
  };

  /** `npm start` on a free port; resolves with the server once /health/ready answers 200. */
  async function npmStart(): Promise<ChildProcess> {
    const port = await freePort();
    const origin = `http://127.0.0.1:${port}`;
    // Its own process group, so that npm, its shell and the server stop together.
    const server = spawn('bash', ['-c', 'exec npm start'], {
      cwd: copy,
      env: { ...env, PORT: String(port), HOST: '127.0.0.1', ISSUER: origin, METRICS_ENABLED: 'false' },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let output = '';
    server.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    server.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    const deadline = Date.now() + 180_000;
    while (Date.now() < deadline && server.exitCode === null) {
      const ready = await fetch(`${origin}/health/ready`).then((response) => response.status, () => 0);
      if (ready === 200) return server;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    await stop(server);
    throw new Error(`npm start did not answer on ${origin}/health/ready:\n${output}`);
  }
  async function stop(server: ChildProcess): Promise<void> {
    if (server.exitCode !== null || server.signalCode !== null) return;
    const exited = once(server, 'exit');
    process.kill(-server.pid!, 'SIGTERM');
    await exited;
  }

  beforeAll(() => {
    machine = otherLineNode();
    env = {
      HOME: process.env.HOME,
      PATH: `${machine.dir}:${pathWithoutOurNodes()}`,
      ...Object.fromEntries(
        ['LANG', 'TMPDIR', 'CI', 'XDG_CACHE_HOME', 'LATCHKEY_NODE_CACHE', 'npm_config_cache', 'npm_config_registry', 'npm_config_userconfig']
          .filter((name) => process.env[name] !== undefined)
          .map((name) => [name, process.env[name]]),
      ),
      // Less network per command; nothing this test looks at.
      npm_config_audit: 'false',
      npm_config_fund: 'false',
      npm_config_update_notifier: 'false',
    };
    // The project as a fresh clone of this working tree has it: tracked and untracked files, nothing git ignores.
    copy = mkdtempSync(join(tmpdir(), 'latchkey-issue31-'));
    const copied = spawnSync('bash', ['-c', 'git ls-files -z --cached --others --exclude-standard | tar --null --ignore-failed-read -T - -cf - 2>/dev/null | tar -xf - -C "$1"', 'copy', copy], { cwd: PROJECT, encoding: 'utf8' });
    if (copied.status !== 0) throw new Error(`Could not copy the project:\n${copied.stderr}`);
  }, STEP);
  afterAll(() => {
    if (!copy) return;
    rmSync(copy, { recursive: true, force: true });
    // npx's install of the copy (a link to it) in npm's cache.
    const npx = join(process.env.npm_config_cache ?? join(homedir(), '.npm'), '_npx');
    for (const entry of existsSync(npx) ? readdirSync(npx) : []) {
      const manifest = join(npx, entry, 'package.json');
      if (existsSync(manifest) && readFileSync(manifest, 'utf8').includes(`"${copy}"`)) rmSync(join(npx, entry), { recursive: true, force: true });
    }
  });

  it("runs on the machine's own Node, of another line", () => {
    expect(sh('node -p process.versions.node').stdout.trim()).toBe(machine.version);
    expect(major(machine.version)).not.toBe(WANTED);
  });

  it('npm ci links node_modules/.bin/node to Node 24', () => {
    sh('npm ci');
    expectLinked();
  }, STEP);

  it('npm run postinstall keeps the link', () => {
    sh('npm run postinstall');
    expectLinked();
  }, STEP);

  it('npm install keeps the link', () => {
    sh('npm install');
    expectLinked();
  }, STEP);

  it('npm install <package> keeps the link', () => {
    // A package of the lock, at its locked version: no download (the copy's package.json changes).
    sh('npm install ms@2.1.3');
    expectLinked();
  }, STEP);

  it('npm rebuild keeps the link', () => {
    sh('npm rebuild');
    expectLinked();
  }, STEP);

  it('npm update keeps the link', () => {
    const saved = ['package.json', 'package-lock.json'].map((file) => [file, readFileSync(join(copy, file))] as const);
    sh('npm update');
    expectLinked();
    // The rest runs on the committed dependencies, not on what the registry has today.
    for (const [file, content] of saved) writeFileSync(join(copy, file), content);
  }, STEP);

  it('npm ci again keeps the link', () => {
    sh('npm ci');
    expectLinked();
  }, STEP);

  it('the first npx latchkey keeps the link', () => {
    // npm installs the project into its npx cache (a file: link) and runs its postinstall there too.
    expect(sh('npx latchkey help').stdout).toMatch(/^Usage: latchkey/);
    expectLinked();
  }, STEP);

  it('npm start answers, and npx latchkey and npm run cli run on Node 24', async () => {
    const server = await npmStart();
    await stop(server);
    // Commands that open the database (a segmentation fault on Node 20).
    expect(JSON.parse(sh('npx latchkey users:list').stdout)).toEqual([]);
    expect(JSON.parse(sh('npm run -s cli -- clients:list').stdout)).toEqual([]);
  }, STEP);

  it("node dist/src/main.js and the CLI on the machine's Node: one line, exit 1, no crash", () => {
    for (const command of ['node dist/src/main.js', 'node dist/src/cli/main.js users:list', 'node scripts/latchkey.mjs users:list']) {
      const result = fails(command);
      expect({ command, status: result.status, signal: result.signal, stderr: result.stderr, stdout: result.stdout }).toEqual({
        command,
        status: 1,
        signal: null,
        stderr: `${byHand(machine.version)}\n`,
        stdout: '',
      });
    }
  });

  it('without the link, npm start and npx latchkey name the fix, and the fix works', async () => {
    rmSync(link());
    for (const command of ['npm start', 'npx latchkey users:list', 'npm run -s cli -- users:list']) {
      const result = fails(command);
      expect({ command, status: result.status, crashed: /Segmentation fault/.test(result.stderr), line: result.stderr.split('\n').filter((line) => line.startsWith('latchkey:')) }).toEqual({
        command,
        status: 1,
        crashed: false,
        line: [byNpm(machine.version)],
      });
    }
    sh('npm run postinstall');
    expectLinked();
    await stop(await npmStart());
  }, STEP);

  it('npm test on the wrong Node, when Node 24 cannot be fetched: one line, exit 1, no test run', () => {
    const empty = mkdtempSync(join(tmpdir(), 'latchkey-no-node-'));
    try {
      const result = fails('node scripts/test.mjs unit', { LATCHKEY_NODE_CACHE: join(empty, 'releases'), npm_config_cache: join(empty, 'npm'), npm_config_offline: 'true' });
      expect(result.status).toBe(1);
      expect(result.stderr.trim().split('\n').at(-1)).toBe(
        `latchkey: this is Node ${machine.version}; Latchkey needs Node ${WANTED} (.nvmrc), which could not be fetched (above). Run: . scripts/use-node.sh   once the npm registry answers, then npm test again`,
      );
      expect(result.stdout).not.toMatch(/=== unit ===/);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
