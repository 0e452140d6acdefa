import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * scripts/link-node.sh, npm's postinstall step: on a machine whose Node is not the release line of
 * .nvmrc, it links node_modules/.bin/node to that release, so npm scripts run on it (README, first
 * section). Run here in a copy of the project's scripts with a .nvmrc of our choosing; the other
 * release comes from the npm registry once, into the same cache as scripts/use-node.sh's.
 */
describe('npm ci on another Node (scripts/link-node.sh)', () => {
  /** use-node.sh's cache of fetched releases. */
  const cache = process.env.LATCHKEY_NODE_CACHE ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'latchkey');
  let project: string;
  const link = () => join(project, 'node_modules', '.bin', 'node');
  const run = () => spawnSync('bash', [join(project, 'scripts', 'link-node.sh')], { cwd: project, encoding: 'utf8', env: { ...process.env, PATH: `${join(process.execPath, '..')}:${process.env.PATH}` } });

  beforeEach(() => {
    project = mkdtempSync(join(tmpdir(), 'latchkey-link-node-'));
    mkdirSync(join(project, 'scripts'));
    mkdirSync(join(project, 'node_modules', '.bin'), { recursive: true });
    for (const file of ['link-node.sh', 'use-node.sh']) copyFileSync(join('scripts', file), join(project, 'scripts', file));
  });
  afterEach(() => rmSync(project, { recursive: true, force: true }));

  it('links nothing when npm runs on the release line of .nvmrc', () => {
    writeFileSync(join(project, '.nvmrc'), `${process.versions.node}\n`);
    expect(run().status).toBe(0);
    expect(existsSync(link())).toBe(false);
  });

  it('removes a link an earlier install made, once npm runs on the right line', () => {
    writeFileSync(join(project, '.nvmrc'), `${process.versions.node}\n`);
    symlinkSync(join(cache, 'node-v0.0.0', 'bin', 'node'), link());
    expect(run().status).toBe(0);
    expect(() => lstatSync(link())).toThrow(/ENOENT/);
  });

  it('links node_modules/.bin/node to the release of .nvmrc when npm runs on another line', () => {
    const other = process.versions.node.startsWith('22.') ? '24.21.0' : '22.23.3';
    writeFileSync(join(project, '.nvmrc'), `${other}\n`);
    const result = run();
    expect(result.status).toBe(0);
    expect(readlinkSync(link())).toBe(join(cache, `node-v${other}`, 'bin', 'node'));
    expect(execFileSync(link(), ['--version'], { encoding: 'utf8' }).trim()).toBe(`v${other}`);
  }, 120_000);
});
