/**
 * Issue 49: the runnable walk-throughs of README.md and docs/, found by their markers. A marker is
 * an HTML comment on the line right before a code fence, so a reader of the rendered page sees
 * the page unchanged (docs/development.md, "Runnable walk-throughs"):
 *
 *   <!-- walk-through: NAME -->                      the block (sh) is NAME's next step: it runs
 *   <!-- walk-through: NAME, answer -->              the block (json) is what the step before printed
 *   <!-- walk-through: NAME, file PATH -->           the block is written to PATH before the next step
 *   <!-- walk-through: NAME, by the test: REASON --> the block (sh) is done by the test itself
 *
 * The steps of one NAME in one file form a walk-through, in the order of the page.
 */
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { documentationFiles, ROOT } from './documentation-files.js';

export type StepKind = 'run' | 'answer' | 'file' | 'by-the-test';

export interface Step {
  kind: StepKind;
  /** The block's text, without its fences. */
  text: string;
  /** Where the block starts, for messages: `docs/getting-started.md:42`. */
  at: string;
  /** The file a `file` step writes, relative to the walk-through's directory. */
  path?: string;
}

export interface WalkThrough {
  /** `docs/getting-started.md: try-it`: the file and the name, as the tests name it. */
  id: string;
  steps: Step[];
}

export interface Found {
  walkThroughs: WalkThrough[];
  /** Markers that do not parse, or stand before no block, or before a block of the wrong language. */
  problems: string[];
  /** Shell blocks left unmarked in a section that is a "Try it" one or holds marked blocks. */
  unmarked: string[];
}

const MARKER = /^<!--\s*walk-through:\s*(.*?)\s*-->$/;
const OPTIONS: [RegExp, (match: RegExpExecArray) => Pick<Step, 'kind' | 'path'>, string][] = [
  [/^([a-z0-9-]+)$/, () => ({ kind: 'run' }), 'sh'],
  [/^([a-z0-9-]+), answer$/, () => ({ kind: 'answer' }), 'json'],
  [/^([a-z0-9-]+), file (\S+)$/, (m) => ({ kind: 'file', path: m[2] }), ''],
  [/^([a-z0-9-]+), by the test: \S.*$/, () => ({ kind: 'by-the-test' }), 'sh'],
];
const FENCE = /^```(\S*)\s*$/;
const HEADING = /^#{1,6}\s+(.*)$/;

/** The walk-throughs of one Markdown text; `name` is how messages and ids call the file. */
export function walkThroughsOf(name: string, markdown: string): Found {
  const lines = markdown.split('\n');
  const byName = new Map<string, WalkThrough>();
  const problems: string[] = [];
  const sections: { heading: string; marked: boolean; unmarked: string[] }[] = [{ heading: '', marked: false, unmarked: [] }];
  for (let i = 0; i < lines.length; i++) {
    const heading = HEADING.exec(lines[i]);
    if (heading) sections.push({ heading: heading[1], marked: false, unmarked: [] });
    const fence = FENCE.exec(lines[i]);
    const marker = MARKER.exec(lines[i]);
    if (marker) {
      const next = FENCE.exec(lines[i + 1] ?? '');
      const option = OPTIONS.map(([pattern, kind, language]) => ({ match: pattern.exec(marker[1]), kind, language })).find((o) => o.match);
      if (!option) problems.push(`${name}:${i + 1}: a walk-through marker that does not parse: ${lines[i]}`);
      else if (!next || next[1] === '') problems.push(`${name}:${i + 1}: a walk-through marker not followed by a fenced block with a language`);
      else if (option.language && next[1] !== option.language) problems.push(`${name}:${i + 1}: a walk-through marker before a ${next[1]} block (wants ${option.language})`);
      else {
        const id = `${name}: ${option.match![1]}`;
        const end = closingFence(lines, i + 2);
        const walkThrough = byName.get(id) ?? { id, steps: [] };
        walkThrough.steps.push({ ...option.kind(option.match!), text: lines.slice(i + 2, end).join('\n'), at: `${name}:${i + 2}` });
        byName.set(id, walkThrough);
        sections.at(-1)!.marked = true;
        i = end;
      }
    } else if (fence && fence[1] !== '') {
      if (fence[1] === 'sh') sections.at(-1)!.unmarked.push(`${name}:${i + 1}`);
      i = closingFence(lines, i + 1);
    }
  }
  const unmarked = sections.filter((s) => s.marked || /^Try it\b/i.test(s.heading)).flatMap((s) => s.unmarked.map((at) => `${at} (section "${s.heading}")`));
  return { walkThroughs: [...byName.values()], problems, unmarked };
}

/** The index of the fence that closes a block whose text starts at `from`. */
function closingFence(lines: string[], from: number): number {
  let end = from;
  while (end < lines.length && lines[end] !== '```') end++;
  return end;
}

/** The walk-throughs of README.md and docs/. */
export function documentedWalkThroughs(): Found {
  const found: Found = { walkThroughs: [], problems: [], unmarked: [] };
  for (const file of documentationFiles()) {
    const one = walkThroughsOf(relative(ROOT, file), readFileSync(file, 'utf8'));
    found.walkThroughs.push(...one.walkThroughs);
    found.problems.push(...one.problems);
    found.unmarked.push(...one.unmarked);
  }
  return found;
}
