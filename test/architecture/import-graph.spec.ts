import { cycles, folderGraph } from '../../scripts/import-graph.mjs';

/**
 * Issue 17: the folders of src/ import each other without cycles, so each can be read, tested and
 * replaced on its own (docs/architecture.md draws the graph: node scripts/import-graph.mjs).
 */
describe('the folder import graph', () => {
  it('has no cycle', () => {
    expect(cycles(folderGraph())).toEqual([]);
  });

  it('finds cycles when there are some (the check itself works)', () => {
    const graph = new Map([
      ['a', new Set(['b'])],
      ['b', new Set(['c'])],
      ['c', new Set(['a'])],
      ['d', new Set(['a'])],
    ]);
    expect(cycles(graph)).toEqual([['a', 'b', 'c']]);
  });

  it('sees the real edges: the data API uses the access-token guard, and nothing imports the app', () => {
    const graph = folderGraph();
    expect(graph.get('resources')).toContain('access');
    expect([...graph.values()].some((targets) => targets.has('app'))).toBe(false);
  });
});
