/**
 * The Nodes a machine has, as scripts/link-node.sh must tell them apart: the machine's own `node`
 * (Debian's Node 20, say) and Latchkey's, the .nvmrc release that scripts/use-node.sh fetches into
 * its cache and link-node.sh links as node_modules/.bin/node. Tests of issue 31 run npm with the
 * machine's own Node first on PATH, as a new user's shell has it.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join, sep } from 'node:path';
import { PROJECT } from './cli.js';

/** use-node.sh's cache of fetched releases (latchkey_node_cache). */
export const NODE_CACHE = process.env.LATCHKEY_NODE_CACHE ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'latchkey');

/** The release of .nvmrc, e.g. 24.21.0. */
export const NVMRC = readFileSync(join(PROJECT, '.nvmrc'), 'utf8').trim().replace(/^v/, '');
export const major = (version: string): number => Number(version.split('.')[0]);

export interface MachineNode {
  /** A folder holding this Node as `node`, to put first on PATH. */
  dir: string;
  node: string;
  version: string;
}

const realOrNull = (path: string): string | null => {
  try {
    return realpathSync(path);
  } catch {
    return null;
  }
};

/** Whether `node` is one of Latchkey's: a node_modules/.bin entry, or anything resolving into the cache. */
export function isOurs(node: string): boolean {
  const cache = realOrNull(NODE_CACHE) ?? NODE_CACHE;
  const real = realOrNull(node);
  return node.includes(`${sep}node_modules${sep}.bin${sep}`) || real === null || real.startsWith(cache + sep);
}

/** PATH without Latchkey's Nodes: no node_modules/.bin folder, no folder whose `node` is in the cache. */
export function pathWithoutOurNodes(path = process.env.PATH ?? ''): string {
  return path
    .split(delimiter)
    .filter((dir) => dir !== '' && !dir.endsWith(`${sep}node_modules${sep}.bin`) && !(existsSync(join(dir, 'node')) && isOurs(join(dir, 'node'))))
    .join(delimiter);
}

const versionOf = (node: string): string => execFileSync(node, ['-p', 'process.versions.node'], { encoding: 'utf8' }).trim();

/** The machine's own `node`: the first on PATH that is not Latchkey's; undefined when there is none. */
export function ownMachineNode(): MachineNode | undefined {
  for (const dir of pathWithoutOurNodes().split(delimiter)) {
    const node = join(dir, 'node');
    try {
      accessSync(node, constants.X_OK);
    } catch {
      continue;
    }
    return { dir, node, version: versionOf(node) };
  }
  return undefined;
}

/** The release fetched when the machine's own Node is on .nvmrc's line: a real Node of another line. */
const OTHER_RELEASE = major(NVMRC) === 22 ? '24.21.0' : '22.23.3';

/**
 * A real Node on another line than .nvmrc's, as the machine's own: the machine's `node` when it is
 * on another line (Node 20 on Debian 12, as on CI), or else Node 22 from the npm registry (as
 * use-node.sh fetches releases, into a folder of its own outside use-node.sh's cache), so that the
 * tests mean the same on a machine whose own Node is already 24.
 */
export function otherLineNode(): MachineNode {
  const own = ownMachineNode();
  if (own && major(own.version) !== major(NVMRC)) return own;
  const fetcher = join(NODE_CACHE + '-test-machines', 'fetcher');
  mkdirSync(join(fetcher, 'scripts'), { recursive: true });
  writeFileSync(join(fetcher, '.nvmrc'), `${OTHER_RELEASE}\n`);
  writeFileSync(join(fetcher, 'scripts', 'use-node.sh'), readFileSync(join(PROJECT, 'scripts', 'use-node.sh')));
  const fetched = spawnSync('bash', ['-c', '. scripts/use-node.sh --define-only && latchkey_fetch_node'], {
    cwd: fetcher,
    encoding: 'utf8',
    env: { ...process.env, LATCHKEY_NODE_CACHE: join(NODE_CACHE + '-test-machines', 'releases') },
  });
  if (fetched.status !== 0) throw new Error(`Could not fetch Node ${OTHER_RELEASE} to play the machine's Node:\n${fetched.stderr}`);
  const dir = join(fetched.stdout.trim(), 'bin');
  return { dir, node: join(dir, 'node'), version: versionOf(join(dir, 'node')) };
}

/**
 * Makes `dir` a folder whose `node` is a shell script running `node` (a real Node, of whichever
 * line): to the scripts it is a machine's own Node, as a version manager's shim is, even when
 * `node` itself lives in use-node.sh's cache.
 */
export function machineNodeRunning(node: string, dir: string): MachineNode {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'node'), `#!/bin/sh\nexec '${node}' "$@"\n`, { mode: 0o755 });
  return { dir, node: join(dir, 'node'), version: versionOf(node) };
}
