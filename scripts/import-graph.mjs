#!/usr/bin/env node
// The folder-level import graph of src/ (docs/architecture.md): which top-level folder's code
// imports which other's. A folder is a unit of the design (one module, or shared infrastructure);
// a cycle between folders means neither can be understood, tested or replaced without the other.
//
//   node scripts/import-graph.mjs            the edges, as a Mermaid flowchart
//   node scripts/import-graph.mjs --reduced  without the edges other paths imply (the drawing in docs/architecture.md)
//   node scripts/import-graph.mjs --check    exit 1, naming them, if the folders form any cycle
//
// Only relative imports of .ts files count (type-only ones too: they couple the code just the same);
// tests (*.spec.ts) are left out, and src/main.ts, app.module.ts and app.setup.ts form the folder "app".
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'src');

/** Every .ts file under src/, tests excluded. */
function sourceFiles(folder = SRC) {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') ? [path] : [];
  });
}

/** The top-level folder of a file under src/ ("app" for the files directly in src/). */
function folderOf(path) {
  const parts = relative(SRC, path).split(sep);
  return parts.length === 1 ? 'app' : parts[0];
}

/** folder → set of folders it imports. */
export function folderGraph() {
  const graph = new Map();
  for (const file of sourceFiles()) {
    const from = folderOf(file);
    if (!graph.has(from)) graph.set(from, new Set());
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)) {
      const target = resolve(dirname(file), match[1]);
      if (!target.startsWith(SRC + sep)) continue;
      const to = folderOf(target);
      if (to !== from) graph.get(from).add(to);
    }
  }
  return graph;
}

/** The strongly connected components with more than one folder (Tarjan): each is a cycle. */
export function cycles(graph) {
  let index = 0;
  const indices = new Map();
  const lowlinks = new Map();
  const stack = [];
  const onStack = new Set();
  const found = [];
  const visit = (node) => {
    indices.set(node, index);
    lowlinks.set(node, index);
    index += 1;
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!indices.has(next)) {
        visit(next);
        lowlinks.set(node, Math.min(lowlinks.get(node), lowlinks.get(next)));
      } else if (onStack.has(next)) {
        lowlinks.set(node, Math.min(lowlinks.get(node), indices.get(next)));
      }
    }
    if (lowlinks.get(node) === indices.get(node)) {
      const component = [];
      let member;
      do {
        member = stack.pop();
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const node of [...graph.keys()].sort()) if (!indices.has(node)) visit(node);
  return found;
}

/** Whether `to` can be reached from `from` without the direct edge between them. */
function reachableOtherwise(graph, from, to) {
  const seen = new Set();
  const stack = [...(graph.get(from) ?? [])].filter((next) => next !== to);
  while (stack.length > 0) {
    const node = stack.pop();
    if (node === to) return true;
    if (seen.has(node)) continue;
    seen.add(node);
    stack.push(...(graph.get(node) ?? []));
  }
  return false;
}

/**
 * The graph as a Mermaid flowchart, edges sorted, dependencies pointing down. With `reduced`, an
 * edge that another path already implies is left out (the transitive reduction of an acyclic
 * graph), which is what a reader needs to see the layers.
 */
export function mermaid(graph, { reduced = false } = {}) {
  const lines = ['flowchart TD'];
  for (const from of [...graph.keys()].sort()) {
    for (const to of [...graph.get(from)].sort()) {
      if (!reduced || !reachableOtherwise(graph, from, to)) lines.push(`  ${from} --> ${to}`);
    }
  }
  return lines.join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const graph = folderGraph();
  if (process.argv.includes('--check')) {
    const found = cycles(graph);
    for (const component of found) console.error(`import cycle between folders: ${component.join(' ↔ ')}`);
    process.exit(found.length > 0 ? 1 : 0);
  }
  console.log(mermaid(graph, { reduced: process.argv.includes('--reduced') }));
}
