/**
 * Issue 49: the configuration reference is complete and true. Every environment variable the
 * server's code reads is documented in it, and every one it documents is read somewhere.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = new URL('../../', import.meta.url).pathname;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith('.ts') && !name.endsWith('.spec.ts') ? [path] : [];
  });
}

/** The variables the code reads: process.env.NAME, env.NAME, env['NAME'], and the fields of the config schemas (src/config/*: class-validator classes whose fields are variable names). */
export function variablesRead(files: readonly { path: string; text: string }[]): Set<string> {
  const names = new Set<string>();
  for (const { path, text } of files) {
    for (const pattern of [/process\.env\.([A-Z][A-Z0-9_]+)/g, /process\.env\[['"]([A-Z][A-Z0-9_]+)['"]\]/g, /\benv\.([A-Z][A-Z0-9_]{2,})/g, /\benv\[['"]([A-Z][A-Z0-9_]+)['"]\]/g]) {
      for (const match of text.matchAll(pattern)) names.add(match[1]);
    }
    if (path.includes('/src/config/')) for (const match of text.matchAll(/^\s+([A-Z][A-Z0-9_]+)[?!]?:\s/gm)) names.add(match[1]);
  }
  return names;
}

/** The variables in the first column of the configuration reference's tables. */
export function variablesDocumented(markdown: string): Set<string> {
  const names = new Set<string>();
  for (const line of markdown.split('\n')) {
    if (!line.startsWith('| `')) continue;
    for (const match of line.split('|')[1].matchAll(/`([A-Z][A-Z0-9_]+)`/g)) names.add(match[1]);
  }
  return names;
}

/** Where the reference lives: docs/operations/configuration.md (the README's "Configuration" section until issue 49 split it). */
function reference(): string {
  return readFileSync(join(ROOT, 'docs/operations/configuration.md'), 'utf8');
}

describe('the configuration reference', () => {
  const read = variablesRead(sourceFiles(join(ROOT, 'src')).map((path) => ({ path, text: readFileSync(path, 'utf8') })));
  const documented = variablesDocumented(reference());

  it('finds variables in code and in the reference (the check itself works)', () => {
    expect(variablesRead([{ path: '/x/src/config/a.config.ts', text: 'class A {\n  @IsInt()\n  FOO_SECONDS?: number;\n}\nprocess.env.BAR; env["BAZ"]' }])).toEqual(new Set(['FOO_SECONDS', 'BAR', 'BAZ']));
    expect(variablesDocumented('| `A_B`, `CD` | x | `NOT_THIS` |\n| Variable |')).toEqual(new Set(['A_B', 'CD']));
    expect(read.size).toBeGreaterThan(50);
    expect(documented.has('ISSUER')).toBe(true);
  });

  it('documents every variable the code reads', () => {
    expect([...read].filter((name) => !documented.has(name)).sort()).toEqual([]);
  });

  it('documents no variable the code does not read', () => {
    expect([...documented].filter((name) => !read.has(name)).sort()).toEqual([]);
  });
});
