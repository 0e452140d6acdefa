/**
 * Issue 49: the documentation stays navigable. Every relative link in README.md and docs/ names a
 * file that exists, and every `#anchor` names a heading of that file, as GitHub renders anchors.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { documentationFiles, ROOT } from './documentation-files.js';

/** The documentation, and the other Markdown files that link into it. */
function markdownFiles(): string[] {
  const files = documentationFiles();
  for (const name of ['SECURITY.md', 'CONTRIBUTING.md', 'bench/RESULTS.md']) if (existsSync(join(ROOT, name))) files.push(join(ROOT, name));
  return files;
}

/** The text outside fenced code blocks. */
function unfenced(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
}

/** The text outside code, where links are links. */
function prose(markdown: string): string {
  return unfenced(markdown).replace(/`[^`\n]*`/g, '');
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens; repeats get -1, -2. */
export function anchorsOf(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const match of unfenced(markdown).matchAll(/^#{1,6}[ \t]+(.+?)[ \t#]*$/gm)) {
    const text = match[1].replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/<[^>]+>/g, '');
    const base = text.toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  for (const match of markdown.matchAll(/<a\s+(?:name|id)="([^"]+)"/g)) anchors.add(match[1]);
  return anchors;
}

function linksOf(markdown: string): string[] {
  const text = prose(markdown);
  const inline = [...text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]);
  const references = [...text.matchAll(/^\s*\[[^\]]+\]:\s*(\S+)/gm)].map((m) => m[1]);
  return [...inline, ...references];
}

describe('links in README.md and docs/', () => {
  const files = markdownFiles();

  it('finds the documents and their links (the check itself works)', () => {
    expect(files.length).toBeGreaterThan(0);
    expect(anchorsOf('# The admin API\n## Errors\n## Errors\n### `doctor`: check it')).toEqual(new Set(['the-admin-api', 'errors', 'errors-1', 'doctor-check-it']));
    expect(linksOf('See [a](#x), [b](docs/y.md#z) and `[c](#not-a-link)`.\n```\n[d](#nor-this)\n```')).toEqual(['#x', 'docs/y.md#z']);
  });

  it.each(files.map((file) => [relative(ROOT, file), file]))('%s: every relative link and anchor resolves', (_name, file) => {
    const markdown = readFileSync(file, 'utf8');
    const broken: string[] = [];
    const anchors = new Map<string, Set<string>>();
    const anchorsIn = (target: string) => anchors.get(target) ?? anchors.set(target, anchorsOf(readFileSync(target, 'utf8'))).get(target)!;
    for (const link of linksOf(markdown)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(link)) continue; // https:, mailto: …: not ours to check here.
      const [path, anchor] = link.split('#', 2) as [string, string | undefined];
      const target = path === '' ? file : resolve(dirname(file), decodeURIComponent(path));
      if (!existsSync(target)) {
        broken.push(`${link}: no file ${relative(ROOT, target)}`);
        continue;
      }
      if (anchor !== undefined && anchor !== '' && target.endsWith('.md') && !anchorsIn(target).has(decodeURIComponent(anchor).toLowerCase())) {
        broken.push(`${link}: no heading with that anchor in ${relative(ROOT, target)}`);
      }
    }
    expect(broken).toEqual([]);
  });
});
