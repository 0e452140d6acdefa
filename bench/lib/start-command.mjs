/**
 * How production starts Latchkey, read from package.json's `start` script: its environment
 * assignments (`MALLOC_ARENA_MAX=2`), Node's options (`--max-semi-space-size=8`) and the entry point.
 * The benchmark starts the server the same way, so the figures are those of `npm start` and the
 * Docker image (whose ENV and CMD test/integration/start-command.spec.ts keeps equal to it).
 */
import { readFileSync } from 'node:fs';

export function parseStartScript(script) {
  const words = script.trim().split(/\s+/);
  const env = {};
  while (words.length > 0 && /^[A-Z_][A-Z0-9_]*=/.test(words[0])) {
    const [name, ...value] = words.shift().split('=');
    env[name] = value.join('=');
  }
  if (words.shift() !== 'node') throw new Error(`package.json's start script must run node: ${script}`);
  const entry = words.pop();
  if (!entry || entry.startsWith('-') || words.some((word) => !word.startsWith('--'))) throw new Error(`Unexpected start script: ${script}`);
  return { env, nodeArgs: words, entry };
}

export function startCommand(packageJsonPath = 'package.json') {
  return parseStartScript(JSON.parse(readFileSync(packageJsonPath, 'utf8')).scripts.start);
}
