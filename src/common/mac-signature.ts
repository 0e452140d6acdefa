import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The MAC access authentication scheme of draft-ietf-oauth-v2-http-mac-02 (§3, §5): the client
 * signs each request with the token's mac_key and sends
 * `Authorization: MAC id="…", ts="…", nonce="…", ext="…", mac="…"`; the server recomputes the MAC
 * over the same normalized request string. Pure functions, shared by the resource server and tests.
 */

/** The parameters of a MAC Authorization header (§3.1). `ext` is optional and defaults to empty. */
export interface MacCredentials {
  id: string;
  ts: string;
  nonce: string;
  ext: string;
  mac: string;
}

/** What the server signs over (§3.2.1): the request as the client saw it. */
export interface MacRequestParts {
  ts: string;
  nonce: string;
  method: string;
  /** Path and query exactly as sent (the HTTP request-target). */
  requestUri: string;
  host: string;
  port: number;
  ext: string;
}

/** Why a header could not be read: RFC 6750 §3.1's invalid_request. */
export class MacHeaderError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MacHeaderError';
  }
}

const REQUIRED = ['id', 'ts', 'nonce', 'mac'] as const;
const KNOWN = new Set<string>([...REQUIRED, 'ext']);
/** auth-param = token BWS "=" BWS quoted-string, without escapes (RFC 9110 §11.2); no value of ours needs one. */
const PARAM = /^\s*([A-Za-z][A-Za-z0-9_-]*)\s*=\s*"([^"\\]*)"\s*(?:,|$)/;
/** Values are printable ASCII: a newline would forge extra lines of the normalized string. */
const PRINTABLE = /^[\x20-\x7e]*$/;

/** True when the Authorization header uses the MAC scheme (case-insensitive, RFC 9110 §11.1). */
export function isMacAuthorization(header: string): boolean {
  return /^mac(\s|$)/i.test(header);
}

/**
 * Parses `MAC id="…", ts="…", nonce="…", [ext="…",] mac="…"`. Missing, empty, repeated, unknown
 * or malformed parameters are refused rather than guessed at: a signature must cover exactly one
 * reading of the request.
 */
export function parseMacAuthorization(header: string): MacCredentials {
  if (!isMacAuthorization(header)) throw new MacHeaderError('Not a MAC Authorization header');
  let rest = header.slice(3);
  if (rest.trim() === '') throw new MacHeaderError('The MAC header carries no parameters');
  const values = new Map<string, string>();
  while (rest.trim() !== '') {
    const match = PARAM.exec(rest);
    if (!match) throw new MacHeaderError('The MAC header is malformed: expected name="value" pairs separated by commas');
    const [whole, rawName, value] = match;
    const name = rawName.toLowerCase();
    if (!KNOWN.has(name)) throw new MacHeaderError(`Unknown MAC parameter "${name}"`);
    if (values.has(name)) throw new MacHeaderError(`The MAC parameter "${name}" is repeated`);
    if (!PRINTABLE.test(value)) throw new MacHeaderError(`The MAC parameter "${name}" holds characters outside printable ASCII`);
    values.set(name, value);
    rest = rest.slice(whole.length);
    // A trailing comma with nothing after it is a malformed list, not an empty element to skip.
    if (whole.trimEnd().endsWith(',') && rest.trim() === '') throw new MacHeaderError('The MAC header ends with a comma');
  }
  for (const name of REQUIRED) {
    if (!values.get(name)) throw new MacHeaderError(`The MAC parameter "${name}" is missing`);
  }
  const ts = values.get('ts')!;
  // §3.1: the timestamp is an integer number of seconds since the epoch.
  if (!/^[0-9]{1,12}$/.test(ts)) throw new MacHeaderError('The MAC parameter "ts" must be a whole number of seconds since 1970');
  return { id: values.get('id')!, ts, nonce: values.get('nonce')!, ext: values.get('ext') ?? '', mac: values.get('mac')! };
}

/**
 * §3.2.1: each element followed by a newline, the last one (ext, possibly empty) included:
 * ts, nonce, method, request-uri, host (lower case), port, ext.
 */
export function normalizedRequestString(parts: MacRequestParts): string {
  return [parts.ts, parts.nonce, parts.method.toUpperCase(), parts.requestUri, parts.host.toLowerCase(), String(parts.port), parts.ext].map((line) => `${line}\n`).join('');
}

/** §5.1 hmac-sha-256: base64 of HMAC-SHA-256 keyed with the mac_key's bytes over the normalized request string. */
export function computeMac(macKey: string, parts: MacRequestParts): string {
  return createHmac('sha256', Buffer.from(macKey, 'utf8')).update(normalizedRequestString(parts), 'utf8').digest('base64');
}

/** Compares a presented MAC with the expected one in constant time (equal-length buffers; a length mismatch is a mismatch). */
export function macMatches(presented: string, expected: string): boolean {
  const left = Buffer.from(presented, 'utf8');
  const right = Buffer.from(expected, 'utf8');
  // timingSafeEqual needs equal lengths; comparing the expected value with itself keeps the time the same.
  return left.length === right.length ? timingSafeEqual(left, right) : !timingSafeEqual(right, right);
}

/** Builds the Authorization header a client sends: what the tests and client code use. */
export function macAuthorizationHeader(token: string, macKey: string, parts: Omit<MacRequestParts, 'ts' | 'nonce' | 'ext'> & { ts: string; nonce: string; ext?: string }): string {
  const ext = parts.ext ?? '';
  const mac = computeMac(macKey, { ...parts, ext });
  return `MAC id="${token}", ts="${parts.ts}", nonce="${parts.nonce}", ${ext === '' ? '' : `ext="${ext}", `}mac="${mac}"`;
}
