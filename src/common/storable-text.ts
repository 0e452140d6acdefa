/**
 * Text both databases can store and compare: well-formed UTF-16 (no lone surrogates) without
 * U+0000, which PostgreSQL's jsonb rejects. Checked before any query, so a bad string is a 400.
 */
export function isStorableText(value: string): boolean {
  return value.isWellFormed() && !value.includes('\u0000');
}

/** Walks a JSON value: are all its strings, keys included, storable? */
export function isStorableJson(value: unknown): boolean {
  if (typeof value === 'string') return isStorableText(value);
  if (Array.isArray(value)) return value.every(isStorableJson);
  if (value !== null && typeof value === 'object') {
    return Object.entries(value).every(([key, inner]) => isStorableText(key) && isStorableJson(inner));
  }
  return true;
}
