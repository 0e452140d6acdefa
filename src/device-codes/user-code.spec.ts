import { displayUserCode, generateUserCode, normalizeUserCode, userCodeHash } from './user-code.js';

describe('user codes (RFC 8628 §6.1)', () => {
  it('are 8 consonants shown as two groups of four, and differ from one another', () => {
    const codes = Array.from({ length: 200 }, generateUserCode);
    for (const code of codes) expect(code).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
    expect(new Set(codes).size).toBe(codes.length);
  });

  it.each([
    ['BCDF-GHJK', 'BCDFGHJK'],
    ['bcdf-ghjk', 'BCDFGHJK'],
    [' bcdf ghjk ', 'BCDFGHJK'],
    ['BCDFGHJK', 'BCDFGHJK'],
  ])('ignore case, the dash and spaces: %j is %s', (typed, normalized) => {
    expect(normalizeUserCode(typed)).toBe(normalized);
    expect(displayUserCode(normalized)).toBe('BCDF-GHJK');
  });

  it.each(['', 'BCDF-GHJ', 'BCDF-GHJKL', 'BCDF-GHJA', 'BCDF-GHJ1', 'BCDF_GHJK', 'BCDF-GHJK\u0000'])('are not anything else: %j', (typed) => {
    expect(normalizeUserCode(typed)).toBeUndefined();
  });

  it('are stored as a hash of the normalized code, never the code', () => {
    expect(userCodeHash('BCDFGHJK')).toMatch(/^[0-9a-f]{64}$/);
    expect(userCodeHash('BCDFGHJK')).not.toContain('BCDF');
    expect(userCodeHash('BCDFGHJK')).not.toBe(userCodeHash('BCDFGHJL'));
  });
});
