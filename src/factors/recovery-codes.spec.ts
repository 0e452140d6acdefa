import { looksLikeRecoveryCode, newRecoveryCode, normalizeRecoveryCode, recoveryCodeHash } from './recovery-codes.js';

describe('recovery codes', () => {
  it('are 16 base32 characters (80 bits) in four groups, all different', () => {
    const codes = Array.from({ length: 200 }, newRecoveryCode);
    for (const code of codes) expect(code).toMatch(/^[a-z2-7]{4}(-[a-z2-7]{4}){3}$/);
    expect(new Set(codes).size).toBe(codes.length);
  });

  it('are recognised however they are typed, and never mistaken for a one-time code', () => {
    const code = newRecoveryCode();
    expect(looksLikeRecoveryCode(code.toUpperCase().replace(/-/g, ' '))).toBe(true);
    expect(normalizeRecoveryCode(` ${code.toUpperCase()} `)).toBe(code.replace(/-/g, ''));
    expect(looksLikeRecoveryCode('123456')).toBe(false);
  });

  it('are stored as a hash bound to the person: the same code of two people hashes differently', () => {
    const code = newRecoveryCode();
    expect(recoveryCodeHash('user-a', code)).toMatch(/^[0-9a-f]{64}$/);
    expect(recoveryCodeHash('user-a', code.toUpperCase())).toBe(recoveryCodeHash('user-a', code));
    expect(recoveryCodeHash('user-b', code)).not.toBe(recoveryCodeHash('user-a', code));
  });
});
