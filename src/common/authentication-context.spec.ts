import { ACR, acrOf, meetsAcr, parseAmr, type AuthenticationMethod } from './authentication-context.js';

describe('authentication context (acr from RFC 8176 amr)', () => {
  it.each<[AuthenticationMethod[], string]>([
    [['pwd'], ACR.password],
    [['pwd', 'otp', 'mfa'], ACR.multiFactor],
    // What the passkey sign-in records: a key bound to our origin, the person verified by the authenticator.
    [['hwk', 'user', 'mfa'], ACR.phishingResistant],
    [['swk', 'user', 'mfa'], ACR.phishingResistant],
  ])('%j reaches %s', (amr, acr) => {
    expect(acrOf(amr)).toBe(acr);
  });

  it('a level meets itself and every weaker one, never a stronger one', () => {
    expect(meetsAcr(['pwd'], ACR.password)).toBe(true);
    expect(meetsAcr(['pwd'], ACR.multiFactor)).toBe(false);
    expect(meetsAcr(['pwd', 'otp', 'mfa'], ACR.multiFactor)).toBe(true);
    expect(meetsAcr(['pwd', 'otp', 'mfa'], ACR.phishingResistant)).toBe(false);
    expect(meetsAcr(['hwk', 'user', 'mfa'], ACR.multiFactor)).toBe(true);
  });

  it('reads stored amr, a grant from before it was recorded being a password', () => {
    expect(parseAmr(null)).toEqual(['pwd']);
    expect(parseAmr('pwd otp mfa')).toEqual(['pwd', 'otp', 'mfa']);
    expect(parseAmr('pwd bogus')).toEqual(['pwd']);
  });
});
