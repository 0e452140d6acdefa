import type { Command } from './command.js';

/** Where the generated list sits in docs/reference/cli.md. */
export const CLI_REFERENCE_BEGIN = '<!-- generated from src/cli/commands.ts: do not edit; test/docs/cli-reference.spec.ts -->';
export const CLI_REFERENCE_END = '<!-- end of the generated list -->';

/**
 * The CLI reference's complete list of commands and flags, made from the commands' own definitions
 * (issue 49), so the reference can never miss a command or a flag the CLI accepts, nor name one it
 * does not: the usage line each command prints, and every flag its parser takes.
 */
export function cliReference(commands: Readonly<Record<string, Command>>): string {
  const rows = Object.entries(commands)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, command]) => `| \`${name}\` | ${code(command.usage)} | ${flagList(command) || '(none)'} |`);
  return ['| Command | Usage | Every flag |', '|---|---|---|', ...rows].join('\n');
}

/** The flags a command's parser accepts, as `--name VALUE` (a string; `…`: may repeat) or `--name` (a switch). */
export function flagsOf(command: Command): string[] {
  return Object.entries(command.options)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([flag, option]) => `--${flag}${option.type === 'string' ? (option.multiple ? ' VALUE …' : ' VALUE') : ''}${option.short ? ` (-${option.short})` : ''}`);
}

function flagList(command: Command): string {
  return flagsOf(command)
    .map((flag) => code(flag))
    .join(', ');
}

/** Inline code in a table cell, on one line: a line break or a `|` would end the cell. */
function code(text: string): string {
  return `\`${text.replace(/\s+/g, ' ').replaceAll('|', '\\|')}\``;
}
