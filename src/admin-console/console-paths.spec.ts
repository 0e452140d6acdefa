import { consolePage, signInPath } from './console-paths.js';

describe('consolePage (where a sign-in may come back to)', () => {
  it.each(['/admin', '/admin/people', '/admin/people?q=ada&cursor=abc', '/admin/clients/L7V9b91e7rjyF-NjePoKBA/confirm/delete'])('keeps the console page %s', (path) => {
    expect(consolePage(path)).toBe(path);
  });

  it.each([
    ['another site', 'https://evil.example/admin'],
    ['a scheme-relative URL', '//evil.example/admin'],
    ['a doubled slash inside', '/admin//evil.example'],
    ['a backslash', '/admin\\evil'],
    ['a dot segment', '/admin/../login'],
    ['a page outside the console', '/account'],
    ['a prefix that is not the console', '/administrator'],
    ['the sign-in itself', '/admin/sign-in?return_to=/admin'],
    ['the callback', '/admin/callback?code=x'],
    ['the admin API', '/admin/api/v1/me'],
    ['a line break', '/admin\r\nSet-Cookie: x=y'],
    ['not a string', 42],
  ])('refuses %s', (_what, value) => {
    expect(consolePage(value)).toBeUndefined();
  });

  it('builds the sign-in path, asking for a new sign-in when told', () => {
    expect(signInPath('/admin/keys/confirm')).toBe('/admin/sign-in?return_to=%2Fadmin%2Fkeys%2Fconfirm');
    expect(signInPath('/admin/keys/confirm', true)).toBe('/admin/sign-in?return_to=%2Fadmin%2Fkeys%2Fconfirm&reauthenticate=1');
  });
});
