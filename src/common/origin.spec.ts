import { exactOrigin, originOfUri } from './origin.js';

describe('web origins (RFC 6454)', () => {
  describe(exactOrigin.name, () => {
    it.each(['https://app.example.com', 'http://127.0.0.1:5173', 'https://app.example.com:8443', 'http://[::1]:3000', 'https://xn--bcher-kva.example'])('%s is an origin as a browser sends it', (origin) => {
      expect(exactOrigin(origin)).toBe(origin);
    });

    it.each([
      ['null', 'the opaque origin'],
      ['', 'empty'],
      ['*', 'a wildcard'],
      ['https://*.example.com', 'a wildcard host'],
      ['https://app.example.com/', 'a trailing slash'],
      ['https://app.example.com/path', 'a path'],
      ['https://App.example.com', 'upper case'],
      ['https://app.example.com:443', 'the default port'],
      ['https://user@app.example.com', 'user information'],
      ['https://app.example.com?x', 'a query'],
      ['https://app.example.com#x', 'a fragment'],
      ['ftp://app.example.com', 'another scheme'],
      ['file:///etc', 'a file URL'],
      ['app.example.com', 'no scheme'],
      [' https://app.example.com', 'a space'],
      [undefined, 'no header'],
    ])('%j (%s) is not', (value, _why) => {
      expect(exactOrigin(value)).toBeUndefined();
    });
  });

  describe(originOfUri.name, () => {
    it.each([
      ['https://app.example.com/callback?x=1', 'https://app.example.com'],
      ['https://APP.example.com:443/cb', 'https://app.example.com'],
      ['http://127.0.0.1:8080/cb', 'http://127.0.0.1:8080'],
      ['com.example.app:/callback', undefined],
      ['not a uri', undefined],
    ])('%s → %s', (uri, origin) => {
      expect(originOfUri(uri)).toBe(origin);
    });
  });
});
