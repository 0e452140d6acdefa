import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { utimes } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { CLI, PROJECT, runCli as cli, type CliResult } from '../helpers/cli.js';

/**
 * The admin CLI's bin entry, scripts/latchkey.mjs (`npx latchkey`, `npm run -s cli --`): it builds
 * dist/ when the sources changed since the last build, then runs the command. No database: it runs
 * in the SQLite group of test:all only (scripts/test.mjs, DATABASE_AGNOSTIC), because it marks the
 * shared dist/ as stale, and the PostgreSQL group running at the same time would race it for the
 * rebuild (one of the two then saw `built: false`).
 */
describe('the bin entry, scripts/latchkey.mjs (`npx latchkey`, `npm run -s cli --`)', () => {
  let firstCall: CliResult;

  beforeAll(async () => {
    // As if src/ had been edited since the last build: the next call must build dist/ first.
    const buildInfo = join(PROJECT, 'dist/.tsbuildinfo');
    if (existsSync(buildInfo)) await utimes(buildInfo, 0, 0);
    firstCall = await cli(['--help']);
  }, 180_000);

  it('is the package\'s bin "latchkey" and its npm script "cli"', () => {
    const manifest = JSON.parse(readFileSync(join(PROJECT, 'package.json'), 'utf8')) as { bin: Record<string, string>; scripts: Record<string, string> };
    expect(manifest.bin).toEqual({ latchkey: CLI });
    expect(manifest.scripts.cli).toBe(`node ${CLI}`);
  });

  it('builds dist/ on the first call after the sources changed, then runs the command', () => {
    expect(firstCall).toMatchObject({ code: 0, built: true, stderr: '' });
    expect(firstCall.stdout).toMatch(/^Usage: latchkey <command>/);
    expect(firstCall.stdout).toContain('npx latchkey <command>');
    expect(firstCall.stdout).toContain('npm run -s cli -- <command>');
  });

  it('runs as an executable from any directory, and does not build again while dist/ is up to date', async () => {
    // What npm's bin link does: execute the file (shebang), from wherever the caller is.
    const second = await promisify(execFile)(join(PROJECT, CLI), ['--help'], {
      cwd: tmpdir(),
      env: { ...process.env, PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ''}` },
    });
    expect(second.stderr).toBe('');
    expect(second.stdout).toBe(firstCall.stdout);
  });
});
