import { matchingStep, newTotpSecret, otpauthUri, timeStep } from './totp.js';

/** RFC 6238 Appendix B: the SHA-1 seed "12345678901234567890" (ASCII), base32. The 6-digit code is the last six of the 8-digit one. */
const RFC_SECRET = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ';

describe('totp (RFC 6238)', () => {
  it.each([
    [59, '287082'],
    [1111111109, '081804'],
    [1111111111, '050471'],
    [1234567890, '005924'],
    [2000000000, '279037'],
    [20000000000, '353130'],
  ])('accepts the Appendix B code at T=%i (%s) for its own step', (seconds, code) => {
    const at = new Date(seconds * 1000);
    expect(matchingStep(RFC_SECRET, code, at)).toBe(timeStep(at));
  });

  it('accepts one step of clock skew either way, and no more', () => {
    const at = new Date(1111111109 * 1000);
    const step = timeStep(at);
    expect(matchingStep(RFC_SECRET, '081804', new Date(at.getTime() + 30_000))).toBe(step);
    expect(matchingStep(RFC_SECRET, '081804', new Date(at.getTime() - 30_000))).toBe(step);
    expect(matchingStep(RFC_SECRET, '081804', new Date(at.getTime() + 60_000))).toBeUndefined();
    expect(matchingStep(RFC_SECRET, '081804', new Date(at.getTime() - 60_000))).toBeUndefined();
  });

  it.each(['', '12345', '1234567', 'abcdef', ' 081804', '08180４'])('refuses %j without computing anything', (code) => {
    expect(matchingStep(RFC_SECRET, code, new Date(1111111109 * 1000))).toBeUndefined();
  });

  it('makes 160-bit base32 secrets, different each time', () => {
    const a = newTotpSecret();
    expect(a).toMatch(/^[A-Z2-7]{32}$/);
    expect(newTotpSecret()).not.toBe(a);
  });

  it('writes the otpauth URI authenticator apps read: SHA1, 6 digits, 30 s, issuer and account', () => {
    const uri = new URL(otpauthUri(RFC_SECRET, 'alice', 'auth.example.com'));
    expect(uri.protocol).toBe('otpauth:');
    expect(uri.host).toBe('totp');
    expect(decodeURIComponent(uri.pathname)).toBe('/auth.example.com:alice');
    expect(Object.fromEntries(uri.searchParams)).toEqual({ issuer: 'auth.example.com', secret: RFC_SECRET, algorithm: 'SHA1', digits: '6', period: '30' });
  });
});
