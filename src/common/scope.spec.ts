import { formatScope, isSubset, isValidScopeToken, normalizeScope, parseScope, splitScope } from './scope.js';

/** RFC 6749 §3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E ). */
function allowedByRfc(code: number): boolean {
  return code === 0x21 || (code >= 0x23 && code <= 0x5b) || (code >= 0x5d && code <= 0x7e);
}

describe('scope (RFC 6749 §3.3)', () => {
  describe(isValidScopeToken.name, () => {
    const ascii = Array.from({ length: 0x80 }, (_, code) => code);

    it.each(ascii.filter(allowedByRfc).map((code) => [code.toString(16), String.fromCharCode(code)]))('accepts the character 0x%s (%s)', (_hex, char) => {
      expect(isValidScopeToken(`a${char}b`)).toBe(true);
    });

    it.each(ascii.filter((code) => !allowedByRfc(code)).map((code) => [code.toString(16), String.fromCharCode(code)]))('refuses the character 0x%s', (_hex, char) => {
      expect(isValidScopeToken(`a${char}b`)).toBe(false);
      expect(isValidScopeToken(char)).toBe(false);
    });

    it.each(['é', 'ü', '€', '😀', '\u00a0', '\u2028'])('refuses the non-ASCII character %j', (char) => {
      expect(isValidScopeToken(`notes${char}`)).toBe(false);
    });

    it('refuses the empty token (a scope-token has at least one character)', () => {
      expect(isValidScopeToken('')).toBe(false);
    });

    it('accepts typical tokens', () => {
      for (const token of ['notes:read', 'openid', 'https://api.example.com/notes.read', '!', '[x]', '~']) expect(isValidScopeToken(token)).toBe(true);
    });
  });

  describe(parseScope.name, () => {
    it('treats an empty value as no scope', () => {
      expect(parseScope('')).toEqual([]);
    });

    it('splits on single spaces and sorts', () => {
      expect(parseScope('notes:write notes:read')).toEqual(['notes:read', 'notes:write']);
    });

    it('removes duplicates (the scope is a set)', () => {
      expect(parseScope('notes:read notes:write notes:read')).toEqual(['notes:read', 'notes:write']);
    });

    it('is case-sensitive (tokens differing in case are different scopes)', () => {
      expect(parseScope('Notes:read notes:read')).toEqual(['Notes:read', 'notes:read']);
    });

    it('gives the same result for every ordering of the same tokens', () => {
      expect(parseScope('c b a')).toEqual(parseScope('a b c'));
      expect(parseScope('b a c a')).toEqual(['a', 'b', 'c']);
    });

    it.each([
      ['two spaces between tokens', 'notes:read  notes:write'],
      ['a leading space', ' notes:read'],
      ['a trailing space', 'notes:read '],
      ['only a space', ' '],
      ['a tab as separator', 'notes:read\tnotes:write'],
      ['a newline as separator', 'notes:read\nnotes:write'],
      ['a double quote', 'notes:"read"'],
      ['a backslash', 'notes:\\read'],
      ['a non-ASCII character', 'notes:read notes:wrïte'],
      ['a NUL byte', 'notes:read\u0000'],
      ['DEL', 'notes:read\u007f'],
    ])('refuses %s', (_case, value) => {
      expect(parseScope(value)).toBeUndefined();
    });

    it('accepts a comma inside a token (0x2C is a scope-token character)', () => {
      expect(parseScope('a,b')).toEqual(['a,b']);
    });
  });

  describe(normalizeScope.name, () => {
    it('de-duplicates and sorts any iterable', () => {
      expect(normalizeScope(new Set(['b', 'a']))).toEqual(['a', 'b']);
      expect(normalizeScope(['b', 'a', 'b'])).toEqual(['a', 'b']);
      expect(normalizeScope([])).toEqual([]);
    });
  });

  describe(formatScope.name, () => {
    it('joins tokens with single spaces (the wire format of §3.3)', () => {
      expect(formatScope(['notes:read', 'notes:write'])).toBe('notes:read notes:write');
      expect(formatScope([])).toBe('');
    });

    it('round-trips with parseScope and splitScope', () => {
      const parsed = parseScope('notes:write notes:read')!;
      expect(parseScope(formatScope(parsed))).toEqual(parsed);
      expect(splitScope(formatScope(parsed))).toEqual(parsed);
    });
  });

  describe(splitScope.name, () => {
    it('splits a stored scope, and gives no tokens for an empty one', () => {
      expect(splitScope('a b')).toEqual(['a', 'b']);
      expect(splitScope('')).toEqual([]);
    });
  });

  describe(isSubset.name, () => {
    it.each([
      [[], [], true],
      [[], ['a'], true],
      [['a'], ['a', 'b'], true],
      [['a', 'b'], ['b', 'a'], true],
      [['a', 'c'], ['a', 'b'], false],
      [['a'], [], false],
      [['A'], ['a'], false],
      [['a:read'], ['a:read:all'], false],
    ])('%j within %j → %s', (requested, allowed, expected) => {
      expect(isSubset(requested, allowed)).toBe(expected);
    });
  });
});
