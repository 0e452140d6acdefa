#!/usr/bin/env node
// Latchkey's admin CLI, as users call it: `npx latchkey <command>`, `npm run -s cli -- <command>`,
// or this file directly. It builds dist/ with tsc only when dist/ is missing or older than the
// sources (the first run, or after an edit), then runs the built CLI in this same process, so a
// call costs one Node start-up and no compiler run. docs/reference/cli.md.
import * as nodeModule from 'node:module';
import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeSync } from 'node:fs';
import { join, relative } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';

// The project root from this file's own place (npx runs it through a symlink, from any directory;
// Node resolves the symlink before setting import.meta.url).
const ROOT = fileURLToPath(new URL('..', import.meta.url));

// Latchkey runs on the Node line of .nvmrc; on an older one the SQLite driver kills the process
// ("Segmentation fault", nothing else). Checked before anything else, a build included, with the
// line of src/runtime/node-line.ts, the built CLI's and server's own check (which cannot run before
// dist/ exists; test/integration/node-link-sequence.spec.ts keeps the two lines equal).
const WANTED = readFileSync(join(ROOT, '.nvmrc'), 'utf8').trim().replace(/^v/, '').split('.')[0];
if (process.versions.node.split('.')[0] !== WANTED) {
  const useNode = join(ROOT, 'scripts', 'use-node.sh');
  const typed = relative(process.cwd(), useNode);
  const fix =
    process.env.npm_lifecycle_event !== undefined
      ? `npm run postinstall   (it links Node ${WANTED} as node_modules/.bin/node for npm start, npm test and npx latchkey)`
      : `. ${typed.startsWith('..') ? useNode : typed}   (Node ${WANTED} first on PATH in this shell), then the same command again`;
  writeSync(2, `latchkey: this is Node ${process.versions.node}; Latchkey needs Node ${WANTED} (.nvmrc). Run: ${fix}\n`);
  process.exit(1);
}
const DIST = join(ROOT, 'dist');
const ENTRY = join(DIST, 'src', 'cli', 'main.js');
// tsc's record of the last build (tsconfig.build.json); its mtime is when that build started.
const BUILD_INFO = join(DIST, '.tsbuildinfo');
const LOCK = join(DIST, '.latchkey-build.lock');
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
// What tsconfig.build.json compiles, besides src/ (its spec files excluded, as there).
const CONFIG_INPUTS = ['tsconfig.json', 'tsconfig.build.json', 'ormconfig.ts'];

/** The newest mtime under `dir`: files and directories (a deleted or added file changes its directory's). */
function newestUnder(dir) {
  let newest = statSync(dir).mtimeMs;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isFile() && entry.name.endsWith('.spec.ts')) continue;
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestUnder(path) : statSync(path).mtimeMs);
  }
  return newest;
}

/** Why dist/ must be built before it can run, or null when it is up to date. */
function staleness() {
  if (!existsSync(ENTRY) || !existsSync(BUILD_INFO)) return 'first run';
  const builtAt = statSync(BUILD_INFO).mtimeMs;
  // No src/ (an image holding only dist/, as the Dockerfile builds it): nothing to compare.
  if (!existsSync(join(ROOT, 'src'))) return null;
  for (const file of CONFIG_INPUTS) {
    const path = join(ROOT, file);
    if (existsSync(path) && statSync(path).mtimeMs > builtAt) return `${file} changed`;
  }
  return newestUnder(join(ROOT, 'src')) > builtAt ? 'sources changed' : null;
}

function pidAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

/**
 * Runs `fn` holding dist/'s build lock, so that two first calls at once do not both write dist/.
 * A lock left by a process that died (Ctrl-C during a build) is taken over.
 */
async function withBuildLock(fn) {
  mkdirSync(DIST, { recursive: true });
  for (;;) {
    try {
      const fd = openSync(LOCK, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      break;
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
      let holder = NaN;
      try {
        holder = Number(readFileSync(LOCK, 'utf8'));
      } catch {
        // Released (or still being written) between our attempt and this read: try again.
      }
      if (Number.isInteger(holder) && holder > 0 && !pidAlive(holder)) rmSync(LOCK, { force: true });
      else await sleep(100);
    }
  }
  try {
    return fn();
  } finally {
    rmSync(LOCK, { force: true });
  }
}

/** Builds dist/ with tsc (its output to stderr: stdout carries only the command's JSON). */
function build(reason) {
  if (!existsSync(TSC)) {
    if (existsSync(ENTRY)) {
      process.stderr.write(`latchkey: dist/ may be out of date (${reason}), but TypeScript is not installed; running it as it is\n`);
      return;
    }
    process.stderr.write('latchkey: dist/ is missing and TypeScript is not installed: run `npm ci` (with dev dependencies), then `npm run build`\n');
    process.exit(1);
  }
  process.stderr.write(`latchkey: building dist/ (${reason})…\n`);
  const startedAt = new Date();
  const result = spawnSync(process.execPath, [TSC, '-p', 'tsconfig.build.json'], { cwd: ROOT, stdio: ['ignore', 2, 2] });
  if (result.status !== 0) {
    // tsc writes what it can even on errors; an old mtime makes the next call try again.
    if (existsSync(BUILD_INFO)) utimesSync(BUILD_INFO, 0, 0);
    process.stderr.write(`latchkey: the build failed (${result.error?.message ?? `tsc exit code ${result.status ?? result.signal}`}); see above\n`);
    process.exit(1);
  }
  // tsc leaves .tsbuildinfo untouched when nothing needed emitting (a file saved unchanged):
  // dating it at this build's start keeps the next call from building again, and still sees an
  // edit made while tsc ran.
  utimesSync(BUILD_INFO, startedAt, startedAt);
}

const reason = staleness();
if (reason !== null) {
  await withBuildLock(() => {
    // Another call may have built while this one waited for the lock.
    const still = staleness();
    if (still !== null) build(still);
  });
}

// V8's compiled code for the ~1,600 modules the CLI loads, kept between calls (Node 22.1+);
// it is keyed by each file's content, so a rebuilt file is simply compiled again.
nodeModule.enableCompileCache?.(join(ROOT, 'node_modules', '.cache', 'latchkey', 'compile-cache'));

// From the project root, as `npm run` and `npm start` run: the default database (data/latchkey.sqlite)
// and any relative path in the configuration mean the same file whichever directory npx is called from.
// Relative paths on the command line (clients:apply -f clients.yaml) stay the caller's.
const callerDirectory = process.cwd();
process.chdir(ROOT);
const { runCli } = await import(pathToFileURL(ENTRY).href);
runCli(process.argv.slice(2), callerDirectory);
