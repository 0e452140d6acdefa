import { DomainError } from '../common/domain-error.js';
import { assertRedirectUrisAcceptable, redirectUriMatches, redirectUriProblem } from './redirect-uri.policy.js';

describe('redirect URI registration policy', () => {
  describe(redirectUriProblem.name, () => {
    it.each([
      ['https with a path', 'https://client.example.com/callback'],
      ['https with a port and a query (RFC 6749 §3.1.2 allows a query)', 'https://client.example.com:8443/cb?tenant=a'],
      ['https on an IP address', 'https://203.0.113.7/cb'],
      ['http on localhost (RFC 8252 §7.3)', 'http://localhost:8080/callback'],
      ['http on 127.0.0.1 (RFC 8252 §7.3)', 'http://127.0.0.1/callback'],
      ['http on 127.0.0.1 with any port', 'http://127.0.0.1:51004/oauth2redirect'],
      ['http on [::1] (RFC 8252 §7.3)', 'http://[::1]:3000/cb'],
      ['a reverse-domain private-use scheme (RFC 8252 §7.1)', 'com.example.app:/oauth2redirect/example-provider'],
      ['a longer reverse-domain private-use scheme', 'io.github.someone.notes-app:/cb'],
    ])('accepts %s', (_case, uri) => {
      expect(redirectUriProblem(uri)).toBeUndefined();
    });

    it.each([
      ['http on a public host', 'http://client.example.com/callback', /https/],
      ['http on a host that merely starts with localhost', 'http://localhost.evil.example/cb', /https/],
      ['http on a host that merely ends with 127.0.0.1', 'http://evil127.0.0.1.example/cb', /https/],
      ['a fragment (RFC 6749 §3.1.2)', 'https://client.example.com/cb#section', /fragment/],
      ['an empty fragment', 'https://client.example.com/cb#', /fragment/],
      ['a fragment on a loopback URI', 'http://localhost:8080/cb#x', /fragment/],
      ['a relative path', '/callback', /absolute/],
      ['a bare word', 'callback', /absolute/],
      ['a scheme-relative URI', '//client.example.com/cb', /absolute/],
      ['an empty string', '', /absolute/],
      ['javascript:', 'javascript:alert(document.cookie)', /scheme/],
      ['JavaScript: in mixed case', 'JavaScript:alert(1)', /scheme/],
      ['data:', 'data:text/html,<script>alert(1)</script>', /scheme/],
      ['vbscript:', 'vbscript:msgbox(1)', /scheme/],
      ['file:', 'file:///etc/passwd', /scheme/],
      ['ftp:', 'ftp://client.example.com/cb', /scheme/],
      ['ws:', 'ws://client.example.com/cb', /scheme/],
      ['a private-use scheme that is not reverse-domain (RFC 8252 §7.1)', 'myapp:/callback', /scheme/],
      ['user information in the authority', 'https://user:pass@client.example.com/cb', /user information/],
      ['a user name in the authority', 'https://client.example.com@evil.example/cb', /user information/],
      ['more than 2000 characters', `https://client.example.com/${'a'.repeat(2000)}`, /2000/],
      // Issue 15: RFC 3986 URIs, byte for byte, and nothing a browser would repair into another address.
      ['a CR LF inside (header injection)', 'https://client.example.com/cb\r\nSet-Cookie: a=b', /control character or whitespace/],
      ['a tab inside', 'https://client.example.com/c\tb', /control character or whitespace/],
      ['a space inside', 'https://client.example.com/c b', /control character or whitespace/],
      ['a trailing space', 'https://client.example.com/cb ', /control character or whitespace/],
      ['a leading space', ' https://client.example.com/cb', /control character or whitespace/],
      ['a NUL', 'https://client.example.com/cb\u0000', /control character or whitespace/],
      ['DEL', 'https://client.example.com/cb\u007f', /control character or whitespace/],
      ['an empty host (browsers would go to https://cb/)', 'https:///cb', /host/],
      ['an empty host with a port', 'https://:443/cb', /host/],
      ['an empty host on http', 'http:///cb', /host/],
      ['https without an authority', 'https:/client.example.com/cb', /host/],
      ['a backslash (browsers read it as a slash)', 'https://client.example.com\\@evil.example/cb', /RFC 3986/],
      ['non-ASCII characters (an IRI, not a URI)', 'https://exämple.com/cb', /RFC 3986/],
      ['a port above 65535', 'https://client.example.com:65536/cb', /port/],
      ['angle brackets', 'https://client.example.com/<cb>', /RFC 3986/],
    ])('refuses %s', (_case, uri, reason) => {
      const problem = redirectUriProblem(uri);
      expect(problem).toBeDefined();
      expect(problem).toMatch(reason);
    });
  });

  describe(assertRedirectUrisAcceptable.name, () => {
    it('accepts a list of acceptable URIs', () => {
      expect(() => assertRedirectUrisAcceptable(['https://client.example.com/cb', 'http://127.0.0.1:8080/cb', 'com.example.app:/cb'])).not.toThrow();
    });

    it('refuses the whole list when one URI is unacceptable, naming it', () => {
      let thrown: unknown;
      try {
        assertRedirectUrisAcceptable(['https://client.example.com/cb', 'http://client.example.com/cb']);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(DomainError);
      expect((thrown as DomainError).code).toBe('invalid_redirect_uri');
      expect((thrown as DomainError).message).toContain('"http://client.example.com/cb"');
      expect((thrown as DomainError).message).not.toContain('"https://client.example.com/cb"');
    });
  });

  describe(redirectUriMatches.name, () => {
    const registered = ['https://client.example.com/cb', 'http://127.0.0.1:7003/cb', 'http://[::1]/native?x=1', 'http://localhost:8080/callback'];

    it.each([
      ['an identical https URI', 'https://client.example.com/cb'],
      ['the identical loopback URI', 'http://127.0.0.1:7003/cb'],
      ['127.0.0.1 on another port (RFC 8252 §7.3)', 'http://127.0.0.1:51004/cb'],
      ['127.0.0.1 without a port', 'http://127.0.0.1/cb'],
      ['[::1] on a port where none was registered', 'http://[::1]:60000/native?x=1'],
      ['the highest port', 'http://127.0.0.1:65535/cb'],
    ])('accepts %s', (_case, requested) => {
      expect(redirectUriMatches(registered, requested)).toBe(true);
    });

    it.each([
      ['an https URI on another port', 'https://client.example.com:8443/cb'],
      ['localhost on another port (only loopback IP literals vary, RFC 8252 §8.3)', 'http://localhost:9090/callback'],
      ['127.0.0.1 with another path', 'http://127.0.0.1:51004/other'],
      ['127.0.0.1 with a longer path', 'http://127.0.0.1:51004/cb/more'],
      ['127.0.0.1 with a query added', 'http://127.0.0.1:51004/cb?x=1'],
      ['127.0.0.1 with a fragment', 'http://127.0.0.1:51004/cb#x'],
      ['[::1] instead of 127.0.0.1', 'http://[::1]:7003/cb'],
      ['another loopback address', 'http://127.0.0.2:7003/cb'],
      ['https instead of http', 'https://127.0.0.1:7003/cb'],
      ['port 0', 'http://127.0.0.1:0/cb'],
      ['a port with a leading zero', 'http://127.0.0.1:07003/cb'],
      ['a port above 65535', 'http://127.0.0.1:65536/cb'],
      ['an empty port', 'http://127.0.0.1:/cb'],
      ['userinfo before the address', 'http://evil@127.0.0.1:7003/cb'],
      ['a host that starts with the address', 'http://127.0.0.1.evil.example:7003/cb'],
    ])('refuses %s', (_case, requested) => {
      expect(redirectUriMatches(registered, requested)).toBe(false);
    });
  });
});
