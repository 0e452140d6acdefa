import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const SRC = join(import.meta.dirname, '..', '..', 'src');

/** Where hand-written SQL may live: each table's store and its SQL helpers, the migrations, and the primitives stores build on. */
const ALLOWED = [/\.store\.ts$/, /\.sql\.ts$/, /^schema\/migrations\//, /^database\//];

/** A statement or a clause, in upper case as this code base writes SQL. */
const KEYWORD = String.raw`\b(?:SELECT\s|INSERT\s+INTO|UPDATE\s+"|DELETE\s+FROM|WHERE\s+"|CREATE\s+(?:UNIQUE\s+)?INDEX|GROUP\s+BY|ORDER\s+BY\s+")`;
/** A string literal (single quotes, double quotes or backticks) holding one. */
const SQL = new RegExp([`'[^'\n]*${KEYWORD}[^'\n]*'`, `"[^"\n]*${KEYWORD}[^"\n]*"`, `\`[^\`\n]*${KEYWORD}[^\`\n]*\``].join('|'));

function sourceFiles(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') ? [path] : [];
  });
}

/** The SQL-looking string literals of a file, comments aside, as `file:line`. */
export function sqlOutsideStores(files: { path: string; text: string }[]): string[] {
  return files.flatMap(({ path, text }) => {
    if (ALLOWED.some((pattern) => pattern.test(path))) return [];
    return text.split('\n').flatMap((line, index) => (!/^\s*(\/\/|\*|\/\*)/.test(line) && SQL.test(line) ? [`${path}:${index + 1}`] : []));
  });
}

/**
 * Issue 17: hand-written SQL lives in one store per table (next to its entity), the migrations and
 * src/database's primitives; services keep only the rules. A statement written anywhere else fails
 * here by file and line.
 */
describe('SQL in stores', () => {
  it('is nowhere else in src/', () => {
    const files = sourceFiles(SRC).map((path) => ({ path: relative(SRC, path), text: readFileSync(path, 'utf8') }));
    expect(files.length).toBeGreaterThan(100);
    expect(sqlOutsideStores(files)).toEqual([]);
  });

  it('finds SQL written in a service (the check itself works)', () => {
    const service = {
      path: 'tokens/tokens.service.ts',
      text: [
        '// SELECT in a comment is fine',
        "const sql = 'UPDATE \"tokens\" SET \"revoked_at\" = ? WHERE \"id\" = ?';",
        'const q = `SELECT "id" FROM "tokens"`;',
        "const x = 'Select an option';",
      ].join('\n'),
    };
    expect(sqlOutsideStores([service, { ...service, path: 'tokens/token.store.ts' }])).toEqual(['tokens/tokens.service.ts:2', 'tokens/tokens.service.ts:3']);
  });
});
