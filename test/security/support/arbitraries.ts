import fc from 'fast-check';
import type { RawRequest } from './raw-http.js';
import { pathSafe } from './raw-http.js';

/**
 * fast-check arbitraries for the fuzz suite. Everything is generated as wire text: latin1 strings
 * whose characters are the bytes sent, so invalid UTF-8, NUL, CR/LF and broken %-escapes reach
 * the server exactly as generated. Real values of the file's fixtures (a real client id, code,
 * token…) appear as `{{name}}` slots, filled in when the request is sent: the counterexample
 * stays readable, and a slot always holds the fixture's current value (a consumed code is
 * replaced by a fresh one), so the fuzzer keeps reaching the code paths behind a valid value.
 */

export type Slots = Record<string, string>;

/** A request before its slots are filled. */
export interface FuzzCase {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body?: string;
}

export const slot = (name: string): string => `{{${name}}}`;

export function fill(template: string, slots: Slots): string {
  return template.replace(/\{\{(\w+)\}\}/g, (whole, name: string) => slots[name] ?? whole);
}

/** The slots a case uses, to know which fixtures an accepted request may have spent. */
export function usesSlot(fuzzCase: FuzzCase, name: string): boolean {
  return JSON.stringify(fuzzCase).includes(slot(name));
}

/** Header values node:http will send: no CR, LF, NUL or other controls but tab. */
function headerSafe(value: string): string {
  return value.replace(/[^\t\x20-\x7e\x80-\xff]/g, '?');
}

export function toRawRequest(fuzzCase: FuzzCase, slots: Slots): RawRequest {
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(fuzzCase.headers)) {
    if (value === undefined) continue;
    headers[name] = Array.isArray(value) ? value.map((v) => headerSafe(fill(v, slots))) : headerSafe(fill(value, slots));
  }
  return {
    method: fuzzCase.method,
    path: pathSafe(fill(fuzzCase.path, slots)),
    headers,
    body: fuzzCase.body === undefined ? undefined : Buffer.from(fill(fuzzCase.body, slots), 'latin1'),
  };
}

const latin1 = (bytes: Uint8Array): string => Buffer.from(bytes).toString('latin1');
export const utf8AsLatin1 = (text: string): string => Buffer.from(text, 'utf8').toString('latin1');

/** Percent-encodes every byte that is not unreserved (RFC 3986 §2.3). */
export function percentEncode(wire: string): string {
  return wire.replace(/[^A-Za-z0-9\-._~]/g, (char) => `%${char.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`);
}

/** Lone UTF-16 surrogates written as the 3-byte sequences UTF-8 forbids (CESU-8), and other invalid UTF-8. */
const invalidUtf8 = fc.constantFrom('\xed\xa0\x80', '\xed\xbf\xbf', '\xed\xa0\x80\xed\xb0\x80', '\xc0\x80', '\xc3', '\xe0\xa4', '\xf8\x88\x80\x80\x80', '\xff\xfe', '\x80');
const controls = fc.constantFrom('\x00', '\r\n', '\r', '\n', '\t', '\x00\x00', 'a\x00b', '\x7f', '\x1b[0m');
/** Escapes that decode to nothing valid: incomplete, non-hex, overlong, surrogates, NUL, CR/LF. */
export const oddEscapes = fc.constantFrom('%', '%E0%A4', '%E0%A4%A', '%FF%FE', '%00', '%zz', '%2', '%%', '%C0%80', '%ED%A0%80', '%0D%0A', '%u0041', '+', '+++', 'a+b', '%2B', '%26', '%3D', '%25');

/** Strings of 10 k to 1 M characters (rarely chosen: a megabyte per case is slow to build and send). */
export const hugeWire = fc
  .record({ length: fc.oneof(fc.integer({ min: 10_000, max: 70_000 }), fc.integer({ min: 70_000, max: 1_000_000 })), unit: fc.constantFrom('A', '%41', '\xc3\xa9', '+', '%', '\x00', 'lk_at_') })
  .map(({ length, unit }) => unit.repeat(Math.ceil(length / unit.length)).slice(0, length));

/** The bytes of a value, before any encoding. */
export const valueBytes: fc.Arbitrary<string> = fc.oneof(
  { weight: 2, arbitrary: fc.constant('') },
  { weight: 4, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }).map(utf8AsLatin1) },
  { weight: 2, arbitrary: fc.uint8Array({ maxLength: 40 }).map(latin1) },
  { weight: 2, arbitrary: fc.tuple(fc.string({ maxLength: 5 }), invalidUtf8, fc.string({ maxLength: 5 })).map(([a, b, c]) => a + b + c) },
  { weight: 2, arbitrary: fc.tuple(fc.string({ maxLength: 5 }), controls, fc.string({ maxLength: 5 })).map(([a, b, c]) => a + b + c) },
);

/**
 * A parameter value as it goes on the wire: a fixture slot, a constant the endpoint knows, random
 * bytes percent-encoded or raw, a broken escape, or a huge value.
 */
export function wireValue(slots: string[], constants: string[] = [], options: { huge?: boolean; rawBytes?: boolean } = {}): fc.Arbitrary<string> {
  const known = [...slots.map(slot), ...constants];
  return fc.oneof(
    { weight: 6, arbitrary: known.length > 0 ? fc.constantFrom(...known) : fc.constant('') },
    { weight: 4, arbitrary: valueBytes.map(percentEncode) },
    { weight: options.rawBytes === false ? 0 : 2, arbitrary: valueBytes },
    { weight: 2, arbitrary: oddEscapes },
    { weight: 2, arbitrary: fc.tuple(known.length > 0 ? fc.constantFrom(...known) : fc.constant(''), options.rawBytes === false ? oddEscapes : fc.oneof(oddEscapes, valueBytes)).map(([a, b]) => a + b) },
    { weight: options.huge === false ? 0 : 1, arbitrary: hugeWire },
  );
}

/** Parameter names: the endpoint's own (so repeats happen), unknown ones, and names that attack parsers. */
export function paramName(names: string[]): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 8, arbitrary: fc.constantFrom(...names) },
    { weight: 1, arbitrary: fc.constantFrom('__proto__', 'constructor', 'prototype', 'hasOwnProperty', 'toString', 'a[b]', '__proto__[x]', 'client_id[]', '', '%00', '%FF', 'x'.repeat(300)) },
    { weight: 1, arbitrary: fc.string({ maxLength: 12 }).map(percentEncode) },
  );
}

export interface ParamSpec {
  /** The endpoint's parameter names. */
  names: string[];
  /** Fixture slots whose values are worth sending. */
  slots: string[];
  /** Other meaningful values (grant types, response types…). */
  constants?: string[];
}

/** A query string or form body: any number of parameters, repeats and unknowns included; sometimes a name with no `=`. */
export function paramsWire(spec: ParamSpec, maxLength = 8): fc.Arbitrary<string> {
  const pair = fc.oneof(
    { weight: 12, arbitrary: fc.tuple(paramName(spec.names), wireValue(spec.slots, spec.constants)).map(([name, value]) => `${name}=${value}`) },
    { weight: 1, arbitrary: paramName(spec.names) },
  );
  return fc.tuple(fc.array(pair, { maxLength }), fc.constantFrom('&', '&', '&', '&&', ';')).map(([pairs, separator]) => pairs.join(separator));
}

/**
 * Exactly one of the endpoint's parameters twice (RFC 6749 §3.1, §3.2: "MUST NOT be included more
 * than once"), the others at most once, with real values, in any order.
 */
export function repeatedParamsWire(base: Record<string, string>, spec: ParamSpec): fc.Arbitrary<{ repeated: string; wire: string }> {
  const names = Object.keys(base);
  return fc
    .record({
      repeated: fc.constantFrom(...names),
      // Values the HTTP parser lets through (no raw bytes in a query, no body over the limit): the check under test is the endpoint's own.
      second: fc.oneof(fc.constant<string | undefined>(undefined), wireValue(spec.slots, spec.constants, { huge: false, rawBytes: false })),
      keep: fc.subarray(names),
      order: fc.integer({ min: 0, max: 1_000_000 }),
    })
    .map(({ repeated, second, keep, order }) => {
      const pairs = [...new Set([...keep, repeated])].map((name) => `${name}=${base[name]}`);
      pairs.push(`${repeated}=${second ?? base[repeated]}`);
      // A deterministic shuffle driven by `order`, so the duplicate is not always last.
      const shuffled = pairs.map((pair, i) => ({ pair, key: (order * (i + 7919)) % 104_729 })).sort((a, b) => a.key - b.key).map((p) => p.pair);
      return { repeated, wire: shuffled.join('&') };
    });
}

/**
 * A valid request's parameters, each kept (most often), dropped, replaced by a fuzzed value or
 * sent twice, plus sometimes an unknown parameter: most cases get past the first checks, and
 * about a third are entirely valid, so the fuzzer exercises the handlers behind them.
 */
export function mutatedParamsWire(base: Record<string, string>, spec: ParamSpec): fc.Arbitrary<string> {
  const mutation = (name: string, value: string): fc.Arbitrary<string[]> =>
    fc.oneof(
      { weight: 16, arbitrary: fc.constant<string[]>([`${name}=${value}`]) },
      { weight: 1, arbitrary: fc.constant<string[]>([]) },
      { weight: 2, arbitrary: wireValue(spec.slots, spec.constants).map((v) => [`${name}=${v}`]) },
      { weight: 1, arbitrary: wireValue(spec.slots, spec.constants, { huge: false }).map((v) => [`${name}=${value}`, `${name}=${v}`]) },
    );
  return fc
    .tuple(fc.tuple(...Object.entries(base).map(([name, value]) => mutation(name, value))), fc.option(paramsWire(spec, 2), { freq: 4 }))
    .map(([pairs, extra]) => [...pairs.flat(), ...(extra ? [extra] : [])].join('&'));
}

export const FORM = 'application/x-www-form-urlencoded';

/** Content types for a form endpoint: the right one, with odd charsets, wrong ones, broken ones, none. */
export const formContentType = fc.oneof(
  { weight: 8, arbitrary: fc.constant<string | undefined>(FORM) },
  {
    weight: 4,
    arbitrary: fc.constantFrom<string | undefined>(
      undefined,
      `${FORM}; charset=UTF-8`,
      `${FORM}; charset=latin1`,
      `${FORM}; charset=iso-8859-1`,
      'APPLICATION/X-WWW-FORM-URLENCODED',
      'application/json',
      'text/plain',
      'multipart/form-data; boundary=xyz',
      'application/octet-stream',
      '',
      ';;;',
      `${FORM}x`,
      `${FORM}, application/json`,
      'application/merge-patch+json',
      'text/html; charset=utf-8',
    ),
  },
);

/** Content types for a JSON endpoint. */
export const jsonContentType = fc.oneof(
  { weight: 8, arbitrary: fc.constant<string | undefined>('application/json') },
  {
    weight: 4,
    arbitrary: fc.constantFrom<string | undefined>(
      undefined,
      'application/json; charset=utf-8',
      'application/json; charset=latin1',
      'application/merge-patch+json',
      'APPLICATION/JSON',
      FORM,
      'text/plain',
      'multipart/form-data; boundary=xyz',
      'application/octet-stream',
      '',
      ';;;',
      'application/jsonx',
      'application/json, text/plain',
      'application/vnd.api+json',
    ),
  },
);

/** JSON texts that are not valid JSON, or not valid UTF-8, or not objects. */
export const badJson = fc.oneof(
  fc.constantFrom('', '{', '}', '{"', '{"a":', '{"a":1,}', "{'a':1}", '[', 'null', 'true', '1', '"x"', '[]', '[{}]', 'NaN', '{"a":NaN}', '{"__proto__":{"x":1}}', '{"a":1}{"b":2}', '\ufeff{}', '{"a":"\\ud800"}', '{"a":"\\u0000"}', '{"a":1e999999}'),
  fc.tuple(fc.json(), fc.nat()).map(([text, cut]) => text.slice(0, cut % Math.max(1, text.length))),
  fc.tuple(fc.json(), invalidUtf8).map(([text, bytes]) => `{"x":"${bytes}",${text.slice(1)}`),
  fc.nat({ max: 100_000 }).map((depth) => '['.repeat(depth % 5_000) + ']'.repeat(depth % 5_000)),
  fc.nat({ max: 5_000 }).map((depth) => `${'{"a":'.repeat(depth + 33)}1${'}'.repeat(depth + 33)}`),
);

/** Any JSON value, as UTF-8 bytes in a latin1 string (the wire text). */
export const anyJsonWire = fc.jsonValue().map((value) => utf8AsLatin1(JSON.stringify(value)));

/** Authorization headers of every shape: none, real credentials (slots), random Basic, Bearer, MAC, empty, broken. */
export function authorizationHeader(slots: string[]): fc.Arbitrary<string | string[] | undefined> {
  const printable = fc.string({ maxLength: 60 });
  return fc.oneof(
    { weight: 4, arbitrary: fc.constant(undefined) },
    { weight: 5, arbitrary: fc.constantFrom(...slots.map(slot)) },
    { weight: 2, arbitrary: fc.uint8Array({ maxLength: 80 }).map((bytes) => `Basic ${Buffer.from(bytes).toString('base64')}`) },
    { weight: 2, arbitrary: fc.tuple(wireValue(['client_id'], []), fc.string({ maxLength: 20 })).map(([id, secret]) => `Basic ${Buffer.from(`${id}:${secret}`, 'latin1').toString('base64')}`) },
    { weight: 2, arbitrary: printable.map((value) => `Bearer ${value}`) },
    // RFC 9449 §7.1: the DPoP scheme, with a token of any shape (its proof header is absent or junk).
    { weight: 1, arbitrary: printable.map((value) => `DPoP ${value}`) },
    { weight: 2, arbitrary: fc.constantFrom('', ' ', 'Basic', 'Basic ', 'Basic ====', 'Basic Og==', 'Basic OjpBOjo=', 'Bearer', 'Bearer ', 'bearer  x', 'BASIC x', 'Digest username="x", realm="y"', 'MAC id="h480djs93hd8",nonce="264095:dj83hs9s",mac="SLDJd4mg43cjQfElUs3Qub4L6xE="', 'Negotiate YII=', 'Basic\tabc', '\xff\xfe', 'DPoP', 'DPoP ', 'dpop a b', 'DPoP lk_at_x') },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...slots.map(slot)), printable).map(([a, b]) => [a, `Bearer ${b}`]) },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...slots.map(slot)), printable).map(([a, b]) => `${a}${b}`) },
  );
}

export const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'] as const;

/** Mostly `usual`, sometimes any other method. */
export function method(usual: string[]): fc.Arbitrary<string> {
  return fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...usual) }, { weight: 1, arbitrary: fc.constantFrom(...METHODS) });
}
