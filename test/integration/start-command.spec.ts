import { readFileSync } from 'node:fs';
import { PROCESS_TUNING } from '../../src/runtime/process-tuning.js';
// @ts-expect-error: the benchmark's plain-JavaScript helper has no type declarations.
import { parseStartScript, startCommand } from '../../bench/lib/start-command.mjs';

interface StartCommand {
  env: Record<string, string>;
  nodeArgs: string[];
  entry: string;
}

/**
 * `npm start`, the Docker image and the benchmark must start the server the same way, the way
 * src/runtime/process-tuning.ts says (bench/RESULTS.md, "Memory").
 */
describe('how the server process is started', () => {
  const start = startCommand() as StartCommand;

  it('npm start runs the server as process-tuning.ts says: two malloc arenas and an 8 MB semi-space', () => {
    expect(start).toEqual(PROCESS_TUNING.launch);
    expect(start).toEqual({ env: { MALLOC_ARENA_MAX: '2' }, nodeArgs: ['--max-semi-space-size=8'], entry: 'dist/src/main.js' });
  });

  it('the Docker image sets the same environment and Node options as process-tuning.ts', () => {
    const dockerfile = readFileSync('Dockerfile', 'utf8');
    for (const [name, value] of Object.entries(PROCESS_TUNING.launch.env)) expect(dockerfile).toMatch(new RegExp(`^ENV .*\\b${name}=${value}\\b`, 'm'));
    const cmd = JSON.parse(/^CMD (\[.*\])$/m.exec(dockerfile)?.[1] ?? '[]') as string[];
    expect(cmd).toEqual(['node', ...PROCESS_TUNING.launch.nodeArgs, PROCESS_TUNING.launch.entry]);
  });

  it('reads environment assignments, Node options and the entry point, and refuses anything else', () => {
    expect(parseStartScript('A=1 B=x=y node --one --two=2 dist/main.js')).toEqual({ env: { A: '1', B: 'x=y' }, nodeArgs: ['--one', '--two=2'], entry: 'dist/main.js' });
    expect(() => parseStartScript('npm run serve')).toThrow(/must run node/);
    expect(() => parseStartScript('node dist/main.js extra')).toThrow(/Unexpected start script/);
    expect(() => parseStartScript('node --flag')).toThrow(/Unexpected start script/);
  });
});
