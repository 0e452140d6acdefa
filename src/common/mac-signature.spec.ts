import { createHmac } from 'node:crypto';
import { computeMac, isMacAuthorization, MacHeaderError, macAuthorizationHeader, macMatches, normalizedRequestString, parseMacAuthorization, type MacRequestParts } from './mac-signature.js';

/** The request of draft-ietf-oauth-v2-http-mac-02 §1.1 / §3.2.1's example. */
const EXAMPLE: MacRequestParts = { ts: '1336363200', nonce: 'dj83hs9s', method: 'GET', requestUri: '/resource/1?b=1&a=2', host: 'example.com', port: 80, ext: '' };
const KEY = '489dks293j39';

describe('MAC access authentication (draft-ietf-oauth-v2-http-mac-02)', () => {
  describe(`${normalizedRequestString.name} (§3.2.1)`, () => {
    it('is ts, nonce, method, request-uri, host, port and ext, each followed by a newline (the empty ext too)', () => {
      expect(normalizedRequestString(EXAMPLE)).toBe('1336363200\ndj83hs9s\nGET\n/resource/1?b=1&a=2\nexample.com\n80\n\n');
    });

    it('upper-cases the method, lower-cases the host, and keeps the request-uri exactly as sent', () => {
      const parts = { ...EXAMPLE, method: 'post', host: 'API.Example.COM', requestUri: '/a%2Fb?Z=1&z=%41', port: 8443, ext: 'a,b=c' };
      expect(normalizedRequestString(parts)).toBe('1336363200\ndj83hs9s\nPOST\n/a%2Fb?Z=1&z=%41\napi.example.com\n8443\na,b=c\n');
    });
  });

  describe(`${computeMac.name} (§5.1 hmac-sha-256)`, () => {
    it('is base64(HMAC-SHA-256(mac_key, normalized request string)), computed here independently', () => {
      const expected = createHmac('sha256', KEY).update('1336363200\ndj83hs9s\nGET\n/resource/1?b=1&a=2\nexample.com\n80\n\n').digest('base64');
      expect(computeMac(KEY, EXAMPLE)).toBe(expected);
      // A fixed vector (openssl dgst -sha256 -hmac), so that a change of encoding (hex, base64url, another hash) cannot slip through.
      expect(computeMac(KEY, EXAMPLE)).toBe('1c0l2YIW7g7syyDmVHy2lxCeZK5VouDCuU0T0YOmTOU=');
    });

    it.each<[string, Partial<MacRequestParts>]>([
      ['ts', { ts: '1336363201' }],
      ['nonce', { nonce: 'dj83hs9t' }],
      ['method', { method: 'POST' }],
      ['path', { requestUri: '/resource/2?b=1&a=2' }],
      ['query', { requestUri: '/resource/1?a=2&b=1' }],
      ['host', { host: 'example.org' }],
      ['port', { port: 443 }],
      ['ext', { ext: 'x' }],
    ])('changes when the %s changes', (_part, change) => {
      expect(computeMac(KEY, { ...EXAMPLE, ...change })).not.toBe(computeMac(KEY, EXAMPLE));
    });

    it('changes with the key', () => {
      expect(computeMac(`${KEY}x`, EXAMPLE)).not.toBe(computeMac(KEY, EXAMPLE));
    });
  });

  describe(parseMacAuthorization.name, () => {
    it('reads the §3.1 parameters; ext defaults to empty', () => {
      expect(parseMacAuthorization('MAC id="h480djs93hd8", ts="1336363200", nonce="dj83hs9s", mac="bhCQXTVyfj5cmA9uKkPFx1zeOXM="')).toEqual({
        id: 'h480djs93hd8',
        ts: '1336363200',
        nonce: 'dj83hs9s',
        ext: '',
        mac: 'bhCQXTVyfj5cmA9uKkPFx1zeOXM=',
      });
    });

    it.each([
      ['a lower-case scheme and names, in another order', 'mac MAC="m", NONCE="n", ts="1", Id="t"'],
      ['spaces around "=" and commas', 'MAC   id = "t" ,ts="1",  nonce="n",mac="m"'],
    ])('accepts %s', (_case, header) => {
      expect(parseMacAuthorization(header)).toEqual({ id: 't', ts: '1', nonce: 'n', ext: '', mac: 'm' });
    });

    it('reads ext', () => {
      expect(parseMacAuthorization('MAC id="t", ts="1", nonce="n", ext="a b,c=d", mac="m"').ext).toBe('a b,c=d');
    });

    it.each([
      ['no parameters', 'MAC'],
      ['only spaces', 'MAC   '],
      ['a missing id', 'MAC ts="1", nonce="n", mac="m"'],
      ['a missing ts', 'MAC id="t", nonce="n", mac="m"'],
      ['a missing nonce', 'MAC id="t", ts="1", mac="m"'],
      ['a missing mac', 'MAC id="t", ts="1", nonce="n"'],
      ['an empty id', 'MAC id="", ts="1", nonce="n", mac="m"'],
      ['an empty mac', 'MAC id="t", ts="1", nonce="n", mac=""'],
      ['a repeated nonce', 'MAC id="t", ts="1", nonce="n", nonce="o", mac="m"'],
      ['a repeated id in another case', 'MAC id="t", ID="u", ts="1", nonce="n", mac="m"'],
      ['an unknown parameter', 'MAC id="t", ts="1", nonce="n", mac="m", bodyhash="x"'],
      ['an unquoted value', 'MAC id=t, ts="1", nonce="n", mac="m"'],
      ['a missing comma', 'MAC id="t" ts="1", nonce="n", mac="m"'],
      ['a trailing comma', 'MAC id="t", ts="1", nonce="n", mac="m",'],
      ['an escaped quote', 'MAC id="t\\"", ts="1", nonce="n", mac="m"'],
      ['an unterminated value', 'MAC id="t, ts="1", nonce="n", mac="m'],
      ['a non-numeric ts', 'MAC id="t", ts="12a", nonce="n", mac="m"'],
      ['a negative ts', 'MAC id="t", ts="-1", nonce="n", mac="m"'],
      ['a fractional ts', 'MAC id="t", ts="1.5", nonce="n", mac="m"'],
      ['a newline inside a value', 'MAC id="t", ts="1", nonce="n\nGET", mac="m"'],
      ['a non-ASCII value', 'MAC id="t", ts="1", nonce="né", mac="m"'],
      ['another scheme', 'Bearer id="t", ts="1", nonce="n", mac="m"'],
    ])('refuses %s', (_case, header) => {
      expect(() => parseMacAuthorization(header)).toThrow(MacHeaderError);
    });
  });

  describe(isMacAuthorization.name, () => {
    it.each([
      ['MAC id="x"', true],
      ['mac id="x"', true],
      ['MAC', true],
      ['MACK id="x"', false],
      ['Bearer lk_at_x', false],
      ['', false],
    ])('%j → %s', (header, expected) => {
      expect(isMacAuthorization(header)).toBe(expected);
    });
  });

  describe(macMatches.name, () => {
    it.each([
      ['equal values', 'abc=', 'abc=', true],
      ['one character off', 'abc=', 'abd=', false],
      ['a shorter value', 'abc', 'abc=', false],
      ['a longer value', 'abc==', 'abc=', false],
      ['an empty value', '', 'abc=', false],
    ])('%s', (_case, presented, expected, result) => {
      expect(macMatches(presented, expected)).toBe(result);
    });
  });

  describe(macAuthorizationHeader.name, () => {
    it('builds a header that parses back and whose mac verifies', () => {
      const header = macAuthorizationHeader('tok', KEY, { ...EXAMPLE, ext: 'e' });
      const parsed = parseMacAuthorization(header);
      expect(parsed).toEqual({ id: 'tok', ts: EXAMPLE.ts, nonce: EXAMPLE.nonce, ext: 'e', mac: computeMac(KEY, { ...EXAMPLE, ext: 'e' }) });
    });
  });
});
