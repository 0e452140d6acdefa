/**
 * Issue 49: splitting the README into docs/ lost nothing. From the README as it was before the split
 * (frozen in fixtures/readme-before-split.md) come the settings of its configuration tables, the
 * commands and flags of its admin CLI section, and every `METHOD /path` it named anywhere; each must
 * still be documented somewhere in README.md or docs/. A setting, flag or endpoint removed on
 * purpose later leaves the snapshot with it, in the same change.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { documentationFiles, ROOT } from './documentation-files.js';

const BEFORE = join(ROOT, 'test/docs/fixtures/readme-before-split.md');

/** README.md and every page under docs/, as one text. */
function documentation(): string {
  return documentationFiles().map((file) => readFileSync(file, 'utf8')).join('\n');
}

/** The lines of a `## name` section, up to the next `## ` heading (`### ` subsections included). */
export function section(markdown: string, name: string): string {
  const start = markdown.indexOf(`\n## ${name}\n`);
  if (start === -1) throw new Error(`no section "## ${name}"`);
  const end = markdown.indexOf('\n## ', start + name.length + 4);
  return markdown.slice(start, end === -1 ? undefined : end);
}

function codeSpans(text: string): string[] {
  return [...text.matchAll(/`([^`\n]+)`/g)].map((m) => m[1]);
}

/** Backticked UPPER_CASE names in the table rows of a text. */
export function settings(text: string): Set<string> {
  const names = new Set<string>();
  for (const line of text.split('\n').filter((l) => l.startsWith('|'))) {
    for (const span of codeSpans(line)) if (/^[A-Z][A-Z0-9_]+$/.test(span)) names.add(span);
  }
  return names;
}

/** Backticked names anywhere in a text: `NAME`, also as `NAME=value`. */
function backtickedNames(text: string): Set<string> {
  return new Set(codeSpans(text).flatMap((span) => [...span.matchAll(/\b([A-Z][A-Z0-9_]{2,})\b/g)].map((m) => m[1])));
}

/** The CLI commands (`users:create …`, a code span that starts with one) and flags (`--name`) of a text. */
export function cli(text: string): { commands: Set<string>; flags: Set<string>; pairs: Set<string> } {
  const commands = new Set<string>();
  const flags = new Set<string>();
  const pairs = new Set<string>();
  for (const line of text.split('\n')) {
    const spans = codeSpans(line);
    const lineCommands = spans.flatMap((span) => /^([a-z]+:[a-z-]+)(?=\s|$)/.exec(span)?.[1] ?? []);
    const lineFlags = spans.flatMap((span) => [...span.matchAll(/(?:^|[\s[|(])(--[a-z][a-z0-9-]*)/g)].map((m) => m[1]));
    for (const command of lineCommands) commands.add(command);
    for (const flag of lineFlags) flags.add(flag);
    // A table row names its command first: its flags are that command's (or those of the commands it lists).
    if (line.startsWith('| `')) for (const command of lineCommands) for (const flag of lineFlags) pairs.add(`${command} ${flag}`);
  }
  return { commands, flags, pairs };
}

/** The lines where both a command and a flag appear in code spans, as "command flag". */
function pairsIn(text: string): Set<string> {
  const found = new Set<string>();
  for (const line of text.split('\n')) {
    const spans = codeSpans(line).join(' ');
    const lineCommands = [...spans.matchAll(/(?:^|\s)([a-z]+:[a-z-]+)(?=\s|$)/g)].map((m) => m[1]);
    const lineFlags = [...spans.matchAll(/(?:^|[\s[|(])(--[a-z][a-z0-9-]*)/g)].map((m) => m[1]);
    for (const command of lineCommands) for (const flag of lineFlags) found.add(`${command} ${flag}`);
  }
  return found;
}

/** Every `METHOD /path` of a text, also the `GET`/`POST /path` form that names several methods. */
export function endpoints(text: string): Set<string> {
  const found = new Set<string>();
  const method = 'GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS';
  const pattern = new RegExp(`\`((?:(?:${method})\`/\`)*)(${method}) (/[^\`\\s]*)\``, 'g');
  for (const match of text.matchAll(pattern)) {
    const methods = [...match[1].matchAll(new RegExp(method, 'g'))].map((m) => m[0]);
    for (const m of [...methods, match[2]]) found.add(`${m} ${match[3]}`);
  }
  return found;
}

describe('nothing lost when the README was split into docs/', () => {
  const before = readFileSync(BEFORE, 'utf8');
  const after = documentation();

  it('finds settings, commands, flags and endpoints (the check itself works)', () => {
    expect(settings('| `A_B`, `CD` | `10` | `EF_G` and `not_this` |\ntext `OUT_SIDE`')).toEqual(new Set(['A_B', 'CD', 'EF_G']));
    expect(cli('| `users:create --username NAME [--email ADDRESS]` | also `--password-stdin`; see `urn:ietf:params` |')).toEqual({
      commands: new Set(['users:create']),
      flags: new Set(['--username', '--email', '--password-stdin']),
      pairs: new Set(['users:create --username', 'users:create --email', 'users:create --password-stdin']),
    });
    expect(endpoints('| `GET`/`PUT`/`DELETE /register/{client_id}` | `POST /token`, not `GET` alone |')).toEqual(
      new Set(['GET /register/{client_id}', 'PUT /register/{client_id}', 'DELETE /register/{client_id}', 'POST /token']),
    );
    expect(section('# T\n## A\nx\n### B\ny\n## C\nz', 'A')).toBe('\n## A\nx\n### B\ny');
  });

  it('every setting of the configuration tables is still documented', () => {
    const documented = settings(section(before, 'Configuration'));
    expect(documented.size).toBeGreaterThan(90);
    const names = backtickedNames(after);
    expect([...documented].filter((name) => !names.has(name)).sort()).toEqual([]);
  });

  it('every command and flag of the admin CLI section is still documented, each flag beside its command', () => {
    const { commands, flags, pairs } = cli(section(before, 'The admin CLI'));
    expect(commands.size).toBeGreaterThan(40);
    expect(flags.size).toBeGreaterThan(80);
    const now = cli(after);
    expect([...commands].filter((command) => !now.commands.has(command)).sort()).toEqual([]);
    expect([...flags].filter((flag) => !now.flags.has(flag)).sort()).toEqual([]);
    const together = pairsIn(after);
    expect([...pairs].filter((pair) => !together.has(pair)).sort()).toEqual([]);
  });

  it('every endpoint the README named is still documented', () => {
    const named = endpoints(before);
    expect(named.size).toBeGreaterThan(50);
    const now = endpoints(after);
    expect([...named].filter((endpoint) => !now.has(endpoint)).sort()).toEqual([]);
  });
});
