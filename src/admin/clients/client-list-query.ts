import type { ClientFilter } from '../../clients/client.store.js';
import { GrantType } from '../../common/oauth.constants.js';
import { ApiError } from '../../http/api-error.js';

const GRANT_TYPES = new Set<string>(Object.values(GrantType));
const KINDS = new Set(['public', 'confidential']);
/** The list's own parameters beside paging's (limit, cursor: admin-paging.ts). */
const PARAMETERS = new Set(['q', 'grant_type', 'type', 'limit', 'cursor']);

/**
 * GET /clients's filters: `q` (a piece of the client id or name, any case), `grant_type` (one the
 * server supports) and `type` (public or confidential). Anything else, repeated or malformed is a
 * 400, never a filter silently ignored (a misspelt filter would list every client as a match).
 */
export function parseClientFilter(query: Record<string, unknown>): ClientFilter {
  const unknown = Object.keys(query).filter((name) => !PARAMETERS.has(name));
  if (unknown.length > 0) throw invalid(`Unknown parameter ${JSON.stringify(unknown[0].slice(0, 64))}; the filters are q, grant_type and type`);
  const text = single(query, 'q');
  if (text !== undefined && (text.length === 0 || text.length > 200 || text.includes('\0'))) throw invalid('q must be 1 to 200 characters');
  const grantType = single(query, 'grant_type');
  if (grantType !== undefined && !GRANT_TYPES.has(grantType)) throw invalid(`grant_type must be one of ${[...GRANT_TYPES].join(', ')}`);
  const kind = single(query, 'type');
  if (kind !== undefined && !KINDS.has(kind)) throw invalid('type must be public or confidential');
  return { text, grantType: grantType as GrantType | undefined, kind: kind as ClientFilter['kind'] };
}

function single(query: Record<string, unknown>, name: string): string | undefined {
  const value = query[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw invalid(`${name} must be given once`);
  return value;
}

function invalid(description: string): ApiError {
  return new ApiError(400, description, { error: 'invalid_request' });
}
