import { ApiError } from '../../http/api-error.js';
import { isStorableText } from '../../common/storable-text.js';

/** A keyset position: the sort that produced it, and the last item's sort value and id. */
export interface Cursor {
  sort: string;
  value: unknown;
  id: string;
}

export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Opaque to clients (base64url JSON); they follow the Link header instead of building one. */
export function encodeCursor(cursor: Cursor): string {
  return Buffer.from(JSON.stringify([cursor.sort, cursor.value, cursor.id])).toString('base64url');
}

export function decodeCursor(value: string, sort: string): Cursor {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(value, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  if (!Array.isArray(parsed) || parsed.length !== 3) throw invalid();
  const [cursorSort, sortValue, id] = parsed as unknown[];
  if (typeof cursorSort !== 'string' || typeof id !== 'string' || !UUID_PATTERN.test(id)) throw invalid();
  if (!['string', 'number', 'boolean'].includes(typeof sortValue) && sortValue !== null) throw invalid();
  // Never issued by us, and PostgreSQL's jsonb cast would fail on it (a 500).
  if (typeof sortValue === 'string' && !isStorableText(sortValue)) throw invalid();
  if (cursorSort !== sort) throw new ApiError(400, 'This cursor belongs to another sort order: follow the Link header of the previous page');
  return { sort: cursorSort, value: sortValue, id };
}

function invalid(): ApiError {
  return new ApiError(400, 'The cursor is not one this server issued');
}
