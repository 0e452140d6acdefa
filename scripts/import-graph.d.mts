/** Types of import-graph.mjs, for the architecture test. */
export type FolderGraph = Map<string, Set<string>>;
export function folderGraph(): FolderGraph;
export function cycles(graph: FolderGraph): string[][];
export function mermaid(graph: FolderGraph, options?: { reduced?: boolean }): string;
