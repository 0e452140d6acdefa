import { ScimError } from '../http/scim-error.js';
import { SCIM_TYPE, type ScimType } from '../scim.constants.js';

export type Token =
  | { type: 'word'; text: string; at: number }
  | { type: 'string'; value: string; at: number }
  | { type: '(' | ')' | '[' | ']'; at: number };

const WORD = /[A-Za-z0-9_:.$\-+]/;
/** Filters and paths are short: a bound keeps parsing cheap whatever a caller sends. */
export const MAX_EXPRESSION_LENGTH = 4096;

/**
 * Splits a filter or a PATCH path into words (attribute paths, operators, numbers, true/false/null),
 * JSON strings (RFC 7644 §3.4.2.2: `compValue` strings are JSON strings, RFC 8259 §7) and brackets.
 */
export function tokenize(text: string, errorType: ScimType = SCIM_TYPE.invalidFilter): Token[] {
  if (text.length > MAX_EXPRESSION_LENGTH) throw ScimError.badRequest(errorType, `The expression is longer than ${MAX_EXPRESSION_LENGTH} characters`);
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
      i++;
    } else if (c === '(' || c === ')' || c === '[' || c === ']') {
      tokens.push({ type: c, at: i });
      i++;
    } else if (c === '"') {
      const end = stringEnd(text, i);
      if (end < 0) throw ScimError.badRequest(errorType, `Unterminated string at position ${i + 1}`);
      try {
        tokens.push({ type: 'string', value: JSON.parse(text.slice(i, end + 1)) as string, at: i });
      } catch {
        throw ScimError.badRequest(errorType, `Malformed string at position ${i + 1}`);
      }
      i = end + 1;
    } else if (WORD.test(c)) {
      const start = i;
      while (i < text.length && WORD.test(text[i])) i++;
      tokens.push({ type: 'word', text: text.slice(start, i), at: start });
    } else {
      throw ScimError.badRequest(errorType, `Unexpected character ${JSON.stringify(c)} at position ${i + 1}`);
    }
  }
  return tokens;
}

/** The index of the quote closing the string opened at `start`, or -1. */
function stringEnd(text: string, start: number): number {
  for (let i = start + 1; i < text.length; i++) {
    if (text[i] === '\\') i++;
    else if (text[i] === '"') return i;
  }
  return -1;
}
