/** RFC 6749 §4.1.2.1, §5.2 and RFC 6750 §3: the characters an error_description may hold. */
const ALLOWED = /^[\x20\x21\x23-\x5B\x5D-\x7E]*$/;
const NOT_ALLOWED = /[^\x20\x21\x23-\x5B\x5D-\x7E]/g;

/** Typographic characters our messages use, in the ASCII a client can show. */
const SPELLINGS: [RegExp, string][] = [
  [/§\s*/g, 'section '],
  [/[“”"‘’]/g, "'"],
  [/…/g, '...'],
  [/[–—]/g, '-'],
  [/→/g, '->'],
  [/×/g, 'x'],
  [/\\/g, '/'],
  [/\s+/g, ' '],
];

/**
 * An error_description as it may leave the server: printable ASCII without `"` and `\`, which
 * RFC 6749 requires in redirects (§4.1.2.1) and token responses (§5.2) and RFC 6750 §3 in
 * WWW-Authenticate challenges. Messages are written for people and cite sections with §; this
 * spells them out once, where an error is sent, instead of in every message. Letters with accents
 * lose them (NFKD); anything else outside the set is dropped.
 */
export function errorDescription(text: string): string {
  if (ALLOWED.test(text)) return text;
  let spelled = text;
  for (const [pattern, replacement] of SPELLINGS) spelled = spelled.replace(pattern, replacement);
  return spelled.normalize('NFKD').replace(NOT_ALLOWED, '');
}
