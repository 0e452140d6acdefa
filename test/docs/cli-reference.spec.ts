/**
 * Issue 49: the CLI reference (docs/reference/cli.md) names every command and flag the CLI accepts,
 * and nothing it does not:
 * - its generated list is what src/cli/cli-reference.ts makes of the commands' own definitions
 *   (after changing a command: UPDATE_DOCS=1 npm run -s test:unit -- test/docs/cli-reference);
 * - every command and flag its hand-written table names exists.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { cliReference, CLI_REFERENCE_BEGIN, CLI_REFERENCE_END } from '../../src/cli/cli-reference.js';
import { COMMANDS } from '../../src/cli/commands.js';

const FILE = new URL('../../docs/reference/cli.md', import.meta.url).pathname;
const COMMAND_NAME = /^(?:[a-z]+:[a-z-]+|doctor|purge)$/;

/** The document with its generated list replaced by `list`. */
function withList(markdown: string, list: string): string {
  const begin = markdown.indexOf(CLI_REFERENCE_BEGIN);
  const end = markdown.indexOf(CLI_REFERENCE_END);
  if (begin < 0 || end < begin) throw new Error(`${FILE} lacks the markers of the generated list`);
  return `${markdown.slice(0, begin + CLI_REFERENCE_BEGIN.length)}\n${list}\n${markdown.slice(end)}`;
}

/** The rows of the hand-written tables (outside the generated list): the commands of the first cell, and the flags of the whole row. */
function handWrittenRows(markdown: string): { commands: string[]; flags: string[]; line: string }[] {
  const outside = markdown.slice(0, markdown.indexOf(CLI_REFERENCE_BEGIN)) + markdown.slice(markdown.indexOf(CLI_REFERENCE_END));
  return outside
    .split('\n')
    .filter((line) => line.startsWith('| `'))
    .map((line) => {
      const firstCell = line.split(/(?<!\\)\|/)[1];
      const commands = [...firstCell.matchAll(/`([^`]+)`/g)].map((m) => m[1].split(' ')[0]).filter((word) => COMMAND_NAME.test(word));
      const flags = [...line.matchAll(/(?<![\w-])--([a-z][a-z0-9-]*)/g)].map((m) => m[1]);
      return { commands, flags, line };
    })
    .filter((row) => row.commands.length > 0);
}

describe('the CLI reference', () => {
  const markdown = readFileSync(FILE, 'utf8');

  it('lists every command and flag, as the commands define them', () => {
    const expected = withList(markdown, cliReference(COMMANDS));
    if (process.env.UPDATE_DOCS === '1' && expected !== markdown) writeFileSync(FILE, expected);
    else expect(markdown).toBe(expected);
  });

  it('names no command and no flag in its hand-written tables that the CLI does not accept', () => {
    const rows = handWrittenRows(markdown);
    expect(rows.length).toBeGreaterThan(10);
    const unknown: string[] = [];
    for (const { commands, flags, line } of rows) {
      for (const name of commands) if (!Object.hasOwn(COMMANDS, name)) unknown.push(`${name} (no such command): ${line.slice(0, 80)}`);
      // A row may describe several commands (`idps:update … `, `idps:list`): a flag must belong to one of them.
      const accepted = new Set(commands.filter((name) => Object.hasOwn(COMMANDS, name)).flatMap((name) => Object.keys(COMMANDS[name].options)));
      for (const flag of flags) if (!accepted.has(flag)) unknown.push(`--${flag} (not a flag of ${commands.join(', ')})`);
    }
    expect(unknown).toEqual([]);
  });

  it('mentions, in prose, every command the CLI has', () => {
    const prose = markdown.slice(0, markdown.indexOf(CLI_REFERENCE_BEGIN));
    const described = new Set(handWrittenRows(prose).flatMap((row) => row.commands));
    expect(Object.keys(COMMANDS).filter((name) => !described.has(name))).toEqual([]);
  });
});
