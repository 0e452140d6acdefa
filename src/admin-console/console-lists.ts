import type { ConsoleApi, Query } from './console-api.js';
import { withQuery } from './console-api.js';

/** One page of an admin API list as a console page shows it: its rows, and links to the next page and back to the first. */
export interface ListPage<T> {
  items: T[];
  next?: string;
  first?: string;
}

/** A query parameter the console passes on to the API: text, trimmed, or '' for none (the API checks the rest). */
export function textParam(value: unknown): string {
  return typeof value === 'string' ? value.trim().slice(0, 200) : '';
}

/**
 * A page of `apiPath` filtered by `filters`, from the cursor the console's own link carries. The
 * API pages by keyset, forwards only: a page links to the next one and back to the first.
 */
export async function listPage<T = Record<string, unknown>>(api: ConsoleApi, apiPath: string, consolePath: string, filters: Query, cursor: unknown): Promise<ListPage<T>> {
  const after = typeof cursor === 'string' && cursor !== '' ? cursor : undefined;
  const answer = await api.get<{ items: T[]; next: string | null }>(apiPath, { ...filters, limit: '25', cursor: after });
  const nextCursor = answer.next === null ? null : new URL(answer.next, 'http://console.invalid').searchParams.get('cursor');
  return {
    items: answer.items,
    next: nextCursor ? withQuery(consolePath, { ...filters, cursor: nextCursor }) : undefined,
    first: after ? withQuery(consolePath, filters) : undefined,
  };
}
