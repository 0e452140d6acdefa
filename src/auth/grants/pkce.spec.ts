import { CodeChallengeMethod } from '../../common/oauth.constants.js';
import { PKCE_VALUE, verifyS256 } from './pkce.js';

/** RFC 7636 Appendix B. */
const RFC_VERIFIER = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
const RFC_CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';

describe('PKCE (RFC 7636)', () => {
  describe(verifyS256.name, () => {
    it('accepts the verifier and challenge of RFC 7636 Appendix B', () => {
      expect(verifyS256(RFC_VERIFIER, RFC_CHALLENGE)).toBe(true);
    });

    it.each([
      ['another verifier', RFC_VERIFIER.replace('d', 'e'), RFC_CHALLENGE],
      ['the verifier with one more character', `${RFC_VERIFIER}A`, RFC_CHALLENGE],
      ['another challenge', RFC_VERIFIER, RFC_CHALLENGE.replace('E', 'F')],
      ['the challenge with base64 padding', RFC_VERIFIER, `${RFC_CHALLENGE}=`],
      ['the challenge in standard base64 (+ and / instead of - and _)', RFC_VERIFIER, 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw+cM'],
      ['the challenge as hex', RFC_VERIFIER, '13d31e961a1ad8ec2f16b10c4c982e0876a878ad6df144566ee1894acb70f9c3'],
      ['an empty verifier', '', RFC_CHALLENGE],
    ])('refuses %s', (_case, verifier, challenge) => {
      expect(verifyS256(verifier, challenge)).toBe(false);
    });

    it('refuses the plain method: a verifier equal to the challenge does not match', () => {
      expect(verifyS256(RFC_VERIFIER, RFC_VERIFIER)).toBe(false);
      expect(verifyS256(RFC_CHALLENGE, RFC_CHALLENGE)).toBe(false);
    });
  });

  describe('code_challenge_method', () => {
    it('supports S256 only: plain is refused (RFC 9700 §2.1.1)', () => {
      expect(Object.values(CodeChallengeMethod)).toEqual(['S256']);
    });
  });

  describe('PKCE_VALUE (RFC 7636 §4.1: 43 to 128 unreserved characters)', () => {
    const unreserved = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~';

    it.each([
      ['43 characters, the shortest', 'a'.repeat(43)],
      ['128 characters, the longest', 'a'.repeat(128)],
      ['the Appendix B verifier', RFC_VERIFIER],
      ['the Appendix B challenge', RFC_CHALLENGE],
      ['every unreserved character', (unreserved + unreserved).slice(0, 128)],
    ])('accepts %s', (_case, value) => {
      expect(PKCE_VALUE.test(value)).toBe(true);
    });

    it.each([
      ['42 characters', 'a'.repeat(42)],
      ['129 characters', 'a'.repeat(129)],
      ['an empty value', ''],
    ])('refuses %s', (_case, value) => {
      expect(PKCE_VALUE.test(value)).toBe(false);
    });

    it.each(['+', '/', '=', ' ', '%', '!', '*', '#', '\n', 'é', '\u0000'])('refuses a value containing %j', (char) => {
      expect(PKCE_VALUE.test('a'.repeat(42) + char)).toBe(false);
      expect(PKCE_VALUE.test(char + 'a'.repeat(50))).toBe(false);
    });

    it('refuses a valid value followed by a newline (the pattern is anchored)', () => {
      expect(PKCE_VALUE.test(`${RFC_VERIFIER}\n`)).toBe(false);
    });
  });
});
