import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { machineNodeRunning, NODE_CACHE, NVMRC, otherLineNode, pathWithoutOurNodes, type MachineNode } from '../helpers/machine-node.js';

/**
 * scripts/link-node.sh, npm's postinstall step: on a machine whose own Node is not on the release
 * line of .nvmrc, it links node_modules/.bin/node to that release, so npm scripts run on it
 * (docs/getting-started.md, "Before you start: Node.js 24"). Run here in a copy of the project's
 * scripts with a .nvmrc of our choosing, with
 * PATH as npm sets it for a lifecycle script: node_modules/.bin first, then the shell's PATH, whose
 * first `node` is the machine's. The releases come from the npm registry once, into the same cache
 * as scripts/use-node.sh's.
 */
describe('npm ci on another Node (scripts/link-node.sh)', () => {
  let project: string;
  const bin = () => join(project, 'node_modules', '.bin');
  const link = () => join(bin(), 'node');
  /** A folder for a machine's `node` shim. */
  const shim = () => join(project, 'machine-bin');
  /** The cached release of .nvmrc, which the link must name. */
  const ours = join(NODE_CACHE, `node-v${NVMRC}`, 'bin', 'node');
  /** link-node.sh as npm runs it: `shellPath` is the PATH of the shell that ran npm. */
  const run = (machine: MachineNode, shellPath = `${machine.dir}:${pathWithoutOurNodes()}`) => {
    const result = spawnSync('bash', [join(project, 'scripts', 'link-node.sh')], { cwd: project, encoding: 'utf8', env: { ...process.env, PATH: `${bin()}:${shellPath}` } });
    if (result.status !== 0) throw new Error(`link-node.sh failed (${result.status}):\n${result.stderr}`);
    return result;
  };

  // The release of .nvmrc, in use-node.sh's cache (fetched once): the link's target, and a real Node 24.
  beforeAll(() => {
    const fetched = spawnSync('bash', ['-c', '. scripts/use-node.sh --define-only && latchkey_fetch_node'], { encoding: 'utf8' });
    if (fetched.status !== 0) throw new Error(`Could not fetch Node ${NVMRC}:\n${fetched.stderr}`);
  }, 120_000);

  beforeEach(() => {
    project = mkdtempSync(join(tmpdir(), 'latchkey-link-node-'));
    mkdirSync(join(project, 'scripts'));
    mkdirSync(bin(), { recursive: true });
    for (const file of ['link-node.sh', 'use-node.sh']) copyFileSync(join('scripts', file), join(project, 'scripts', file));
    writeFileSync(join(project, '.nvmrc'), `${NVMRC}\n`);
  });
  afterEach(() => rmSync(project, { recursive: true, force: true }));

  it('links node_modules/.bin/node to the release of .nvmrc when the machine runs another line', () => {
    const machine = otherLineNode();
    run(machine);
    expect(readlinkSync(link())).toBe(ours);
    expect(execFileSync(link(), ['--version'], { encoding: 'utf8' }).trim()).toBe(`v${NVMRC}`);
  }, 120_000);

  // Issue 31: npm runs the script again with node_modules/.bin first on PATH, where it found its own
  // link, took it for the machine's Node 24 and removed it; `npm start` then segfaulted on Node 20.
  it('keeps its link on every later install, though npm puts that link first on PATH', () => {
    const machine = otherLineNode();
    run(machine);
    for (let i = 0; i < 2; i++) {
      run(machine);
      expect(readlinkSync(link())).toBe(ours);
    }
  }, 120_000);

  it('keeps its link when npm runs in a shell where use-node.sh put Node 24 first on PATH', () => {
    const machine = otherLineNode();
    run(machine);
    run(machine, `${join(NODE_CACHE, `node-v${NVMRC}`, 'bin')}:${machine.dir}:${pathWithoutOurNodes()}`);
    expect(readlinkSync(link())).toBe(ours);
  }, 120_000);

  it('links nothing when the machine runs the line of .nvmrc', () => {
    run(machineNodeRunning(ours, shim()));
    expect(existsSync(link())).toBe(false);
  });

  it('removes its link once the machine runs the line of .nvmrc itself', () => {
    const machine = otherLineNode();
    run(machine);
    expect(readlinkSync(link())).toBe(ours);
    // The machine upgraded to Node 24 (a shim running a real Node 24, not in use-node.sh's cache).
    run(machineNodeRunning(ours, shim()));
    expect(() => lstatSync(link())).toThrow(/ENOENT/);
  }, 120_000);

  it('leaves a node_modules/.bin/node it did not make', () => {
    const machine = machineNodeRunning(ours, shim());
    symlinkSync(machine.node, link());
    run(machine);
    expect(readlinkSync(link())).toBe(machine.node);
  });
});
