/**
 * Latchkey runs on one Node.js release line: the one .nvmrc names, CI tests and the Docker image
 * ships (package.json's engines too). On an older line it does not merely misbehave: better-sqlite3
 * 13 kills the process on Node 20 with "Segmentation fault" and nothing else when it opens the
 * database. The server (main.ts) and the CLI (cli/main.ts) import this module first, so that a
 * process on another line exits before the SQLite driver loads, with one line on stderr: which Node
 * runs, which one is needed, and the command that fixes it. It imports only Node's built-ins.
 */
import { existsSync, writeSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The major of .nvmrc (test/integration/node-link-sequence.spec.ts keeps the two equal). */
export const REQUIRED_NODE_MAJOR = 24;

export interface NodeLineSituation {
  /** The Node that runs, as process.versions.node says. */
  version: string;
  /**
   * Started by npm (`npm start`, `npm test`, `npm run cli`, `npx latchkey`): npm ran the `node` it
   * found first on PATH, node_modules/.bin's when scripts/link-node.sh linked one there.
   */
  startedByNpm: boolean;
  /** The path of scripts/use-node.sh to type from the current folder; null outside a checkout (an image with only dist/). */
  useNode: string | null;
}

/** The one line for a process on another Node line, or null on the right one. */
export function wrongNodeLine(situation: NodeLineSituation): string | null {
  const { version, startedByNpm, useNode } = situation;
  if (Number(version.split('.')[0]) === REQUIRED_NODE_MAJOR) return null;
  const head = `latchkey: this is Node ${version}; Latchkey needs Node ${REQUIRED_NODE_MAJOR} (.nvmrc).`;
  // Not a checkout: nothing here can fetch a Node.
  if (useNode === null) return `${head} Install Node ${REQUIRED_NODE_MAJOR}`;
  // npm found no link to Node 24 in node_modules/.bin (removed, or the install could not fetch it):
  // postinstall makes it again, in a second, and npm's scripts run on it from then on.
  if (startedByNpm) return `${head} Run: npm run postinstall   (it links Node ${REQUIRED_NODE_MAJOR} as node_modules/.bin/node for npm start, npm test and npx latchkey)`;
  // `node …` typed in a shell runs that shell's Node, whatever node_modules/.bin holds.
  return `${head} Run: . ${useNode}   (Node ${REQUIRED_NODE_MAJOR} first on PATH in this shell), then the same command again`;
}

/** scripts/use-node.sh as typed from the current folder, or null when there is none above this file. */
function findUseNode(): string | null {
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    const script = join(dir, 'scripts', 'use-node.sh');
    if (existsSync(join(dir, 'package.json'))) {
      if (!existsSync(script)) return null;
      const typed = relative(process.cwd(), script);
      return typed.startsWith('..') ? script : typed;
    }
    if (dirname(dir) === dir) return null;
  }
}

if (Number(process.versions.node.split('.')[0]) !== REQUIRED_NODE_MAJOR) {
  // npm names the script it runs (start, test, npx, …). Read here, not through src/config/: this runs
  // before any other module loads, and only on the wrong Node.
  // eslint-disable-next-line no-restricted-properties
  const startedByNpm = process.env.npm_lifecycle_event !== undefined;
  const line = wrongNodeLine({ version: process.versions.node, startedByNpm, useNode: findUseNode() });
  // Synchronously: process.exit() drops what an asynchronous stream still holds.
  writeSync(2, `${line}\n`);
  process.exit(1);
}
