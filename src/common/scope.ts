/**
 * RFC 6749 §3.3: scope = scope-token *( SP scope-token ), scope-token = 1*( %x21 / %x23-5B / %x5D-7E ).
 * Scopes are kept as sorted, de-duplicated sets internally and joined with one space on the wire.
 */
const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]+$/;

export function isValidScopeToken(token: string): boolean {
  return SCOPE_TOKEN.test(token);
}

/** Parses a scope string; returns undefined when it is malformed (empty tokens, bad characters). */
export function parseScope(value: string): string[] | undefined {
  if (value === '') return [];
  const tokens = value.split(' ');
  if (!tokens.every(isValidScopeToken)) return undefined;
  return normalizeScope(tokens);
}

export function normalizeScope(tokens: Iterable<string>): string[] {
  return [...new Set(tokens)].sort();
}

export function formatScope(tokens: readonly string[]): string {
  return tokens.join(' ');
}

/** Splits a stored (already valid) scope string. */
export function splitScope(value: string): string[] {
  return value === '' ? [] : value.split(' ');
}

export function isSubset(requested: readonly string[], allowed: readonly string[]): boolean {
  const pool = new Set(allowed);
  return requested.every((s) => pool.has(s));
}
