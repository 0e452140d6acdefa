/**
 * Issue 48: "an operator can do every CLI task from the console or the API". The admin API
 * reference (docs/reference/admin-api.md, "Every CLI command over HTTP") names, for each CLI
 * command, the routes that do its work, or why it stays on the CLI; this checks that no command is
 * missing from that table and that every route it names is one the API describes (its OpenAPI
 * document, src/admin/openapi/), so a new command or a renamed route fails here.
 */
import { readFileSync } from 'node:fs';
import { adminPaths } from '../../src/admin/openapi/admin-openapi.js';
import { COMMANDS } from '../../src/cli/commands.js';

const FILE = new URL('../../docs/reference/admin-api.md', import.meta.url).pathname;
const SECTION = '## Every CLI command over HTTP';

/** The section's rows: command → the cell naming its routes. */
function parityRows(): Map<string, string> {
  const markdown = readFileSync(FILE, 'utf8');
  const start = markdown.indexOf(SECTION);
  if (start < 0) throw new Error(`${FILE} lacks the section "${SECTION}"`);
  const next = markdown.indexOf('\n## ', start + SECTION.length);
  const section = markdown.slice(start, next < 0 ? undefined : next);
  const rows = new Map<string, string>();
  for (const line of section.split('\n').filter((l) => /^\| `[a-z:-]+` \|/.test(l))) {
    const [, command, routes] = line.split('|').map((cell) => cell.trim());
    rows.set(command.replaceAll('`', ''), routes);
  }
  return rows;
}

describe('every CLI command has an admin API twin', () => {
  const rows = parityRows();
  const described = adminPaths('https://issuer.example');

  it('names every command of the CLI, and no other', () => {
    expect([...rows.keys()].sort()).toEqual(Object.keys(COMMANDS).sort());
  });

  it('names only routes the admin API describes, or says why a command stays on the CLI', () => {
    for (const [command, cell] of rows) {
      if (cell.startsWith('stays on the CLI:')) continue;
      const routes = [...cell.matchAll(/`(GET|POST|PUT|PATCH|DELETE) (\/[^`]+)`/g)];
      expect({ command, namesARoute: routes.length > 0 }).toEqual({ command, namesARoute: true });
      for (const [, method, path] of routes) {
        const item = described[`/admin/api/v1${path}`] as Record<string, unknown> | undefined;
        expect({ command, route: `${method} ${path}`, described: Boolean(item?.[method.toLowerCase()]) }).toEqual({ command, route: `${method} ${path}`, described: true });
      }
    }
  });
});
