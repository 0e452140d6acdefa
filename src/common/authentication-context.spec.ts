import { ACR, acrOf, meetsAcr, meetsRequiredAcr, parseAmr, requiredAcr, type Acr, type AuthenticationMethod } from './authentication-context.js';

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

  describe(requiredAcr.name, () => {
    const { password: PWD, multiFactor: MFA, phishingResistant: PHR } = ACR;
    /** The sources as a case names them: the request's acr_values, the client's default_acr_values and minimum_acr, the person's requirement. */
    const level = (requested: Acr[] | undefined, defaults: Acr[] | undefined, minimum: Acr | null, person: boolean): Acr =>
      requiredAcr({ requested, client: { minimumAcr: minimum, openId: { defaultAcrValues: defaults } }, secondFactorRequired: person });

    it.each<[string, Acr[] | undefined, Acr[] | undefined, Acr | null, boolean, Acr]>([
      ['nothing: a password', undefined, undefined, null, false, PWD],
      ['the request alone, the weakest it names (any of them answers, Core §3.1.2.1)', [PHR, MFA], undefined, null, false, MFA],
      ['the default alone, for a request that names none', undefined, [MFA], null, false, MFA],
      ['the floor alone', undefined, undefined, PHR, false, PHR],
      ['the person alone', undefined, undefined, null, true, MFA],
      ['a request below the default replaces it (a default)', [PWD], [PHR], null, false, PWD],
      ['a request below the floor does not lower it', [PWD], undefined, MFA, false, MFA],
      ['a request above the floor raises it', [PHR], undefined, MFA, false, PHR],
      ['a default above the floor', undefined, [PHR], MFA, false, PHR],
      ['a default below the floor', undefined, [PWD], MFA, false, MFA],
      ['a request for pwd and the person', [PWD], undefined, null, true, MFA],
      ['the person below the floor', undefined, undefined, PHR, true, PHR],
      ['a request for pwd, a default of phr, a floor of mfa and the person', [PWD], [PHR], MFA, true, MFA],
    ])('%s', (_case, requested, defaults, minimum, person, expected) => {
      expect(level(requested, defaults, minimum, person)).toBe(expected);
    });
  });

  describe(meetsRequiredAcr.name, () => {
    const PASSWORD: AuthenticationMethod[] = ['pwd'];
    const CODE: AuthenticationMethod[] = ['pwd', 'otp', 'mfa'];
    const PASSKEY: AuthenticationMethod[] = ['hwk', 'user', 'mfa'];

    it.each<[string, AuthenticationMethod[], Acr | null, boolean, boolean]>([
      ['a password, nothing required', PASSWORD, null, false, true],
      ['a password, a floor of mfa', PASSWORD, ACR.multiFactor, false, false],
      ['a password, the person required a second factor', PASSWORD, null, true, false],
      ['a code, a floor of mfa and the person', CODE, ACR.multiFactor, true, true],
      ['a code, a floor of phr', CODE, ACR.phishingResistant, false, false],
      ['a passkey, a floor of phr', PASSKEY, ACR.phishingResistant, true, true],
    ])('%s', (_case, amr, minimum, person, expected) => {
      expect(meetsRequiredAcr(amr, { minimumAcr: minimum }, person)).toBe(expected);
    });
  });
});
