import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../http/api-error.js';
import { sendAdminJson } from './admin-reply.js';

/**
 * Paging for every admin API list (issue 48): `?limit=` (1 to 200, default 50) and an opaque
 * `?cursor=` the previous page handed out. Keyset paging, as the data API pages, so a page is one
 * indexed range read however deep the list, and an insert never shifts a later page.
 */
export interface AdminPageQuery {
  limit: number;
  /** The last row of the previous page: its sort value and id, or null on the first page. */
  after: AdminCursor | null;
}

/** A keyset position: the last row's sort value (a name, a time as ISO text) and its id. */
export interface AdminCursor {
  value: string;
  id: string;
}

export const ADMIN_PAGE_DEFAULT = 50;
export const ADMIN_PAGE_MAX = 200;

/**
 * The paging parameters of a list request; anything malformed is a 400, never a silent default.
 * `valid`: what the list's keyset holds (a UUID, a time), so that a forged cursor is that same 400
 * rather than a value the database refuses.
 */
export function parseAdminPage(query: Record<string, unknown>, valid: (cursor: AdminCursor) => boolean = () => true): AdminPageQuery {
  const after = query.cursor === undefined ? null : decodeAdminCursor(query.cursor);
  if (after !== null && !valid(after)) throw invalidCursor();
  return { limit: parseLimit(query.limit), after };
}

function parseLimit(raw: unknown): number {
  if (raw === undefined) return ADMIN_PAGE_DEFAULT;
  if (typeof raw !== 'string' || !/^[0-9]{1,4}$/.test(raw) || Number(raw) < 1 || Number(raw) > ADMIN_PAGE_MAX) {
    throw new ApiError(400, `limit must be a whole number from 1 to ${ADMIN_PAGE_MAX}`, { error: 'invalid_request' });
  }
  return Number(raw);
}

/** Opaque to callers (base64url JSON): they follow `next` instead of building one. */
export function encodeAdminCursor(cursor: AdminCursor): string {
  return Buffer.from(JSON.stringify([cursor.value, cursor.id])).toString('base64url');
}

export function decodeAdminCursor(raw: unknown): AdminCursor {
  if (typeof raw !== 'string' || raw.length === 0 || raw.length > 1024) throw invalidCursor();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
  } catch {
    throw invalidCursor();
  }
  if (!Array.isArray(parsed) || parsed.length !== 2 || !parsed.every((part) => typeof part === 'string' && part.length <= 512 && !part.includes('\0'))) throw invalidCursor();
  return { value: parsed[0] as string, id: parsed[1] as string };
}

function invalidCursor(): ApiError {
  return new ApiError(400, 'The cursor is not one this server issued: follow the next link of the previous page', { error: 'invalid_request' });
}

/**
 * One page of a list: `{ items, next }`, where `next` is the path and query of the following page (a
 * link as a field, as the data API's conventions ask) or null on the last page. `rows` holds up
 * to limit + 1 rows: the extra one only says a next page exists. `about`: members describing the
 * whole list (a count), beside the page.
 */
export function sendAdminPage<Row>(request: FastifyRequest, reply: FastifyReply, rows: Row[], page: AdminPageQuery, shape: (row: Row) => unknown, position: (row: Row) => AdminCursor, about: Record<string, unknown> = {}): void {
  const items = rows.slice(0, page.limit);
  const more = rows.length > page.limit;
  sendAdminJson(reply, { ...about, items: items.map(shape), next: more ? nextPageUrl(request, encodeAdminCursor(position(items[items.length - 1]))) : null });
}

function nextPageUrl(request: FastifyRequest, cursor: string): string {
  const url = new URL(request.url, 'http://placeholder');
  url.searchParams.set('cursor', cursor);
  return `${url.pathname}${url.search}`;
}
