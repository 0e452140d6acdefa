import { constantTimeEqual, generateSecret, hashSecret, SECRET_PREFIX, secretMatchesHash } from './secrets.js';

describe('secrets', () => {
  describe('SECRET_PREFIX', () => {
    it('gives each kind of credential its own recognisable prefix', () => {
      expect(SECRET_PREFIX).toEqual({ accessToken: 'lk_at_', refreshToken: 'lk_rt_', authorizationCode: 'lk_ac_', clientSecret: 'lk_cs_', registrationToken: 'lk_rat_', session: 'lk_ss_', pushedRequest: 'lk_par_', deviceCode: 'lk_dc_', emailLink: 'lk_el_' });
    });
  });

  describe(generateSecret.name, () => {
    it.each(Object.values(SECRET_PREFIX))('%s…: the prefix, then 256 random bits as 43 base64url characters', (prefix) => {
      const secret = generateSecret(prefix);
      expect(secret).toMatch(new RegExp(`^${prefix}[A-Za-z0-9_-]{43}$`));
      const random = Buffer.from(secret.slice(prefix.length), 'base64url');
      expect(random).toHaveLength(32);
      expect(random.toString('base64url')).toBe(secret.slice(prefix.length));
    });

    it('never repeats, and the random part is not constant in any position', () => {
      const secrets = Array.from({ length: 200 }, () => generateSecret(SECRET_PREFIX.accessToken).slice(SECRET_PREFIX.accessToken.length));
      expect(new Set(secrets).size).toBe(secrets.length);
      for (let i = 0; i < 43; i++) expect(new Set(secrets.map((s) => s[i])).size).toBeGreaterThan(1);
    });
  });

  describe(hashSecret.name, () => {
    it.each([
      ['', 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'],
      ['abc', 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'],
    ])('is SHA-256 in lower-case hex (FIPS 180-2 vector %j)', (input, digest) => {
      expect(hashSecret(input)).toBe(digest);
    });

    it('hashes the UTF-8 bytes of the secret (not Latin-1, not UTF-16)', () => {
      expect(hashSecret('é')).toBe('4a99557e4033c3539de2eb65472017cad5f9557f7a0625a09f1c3f6e2ba69c4c');
    });

    it('is 64 hex characters that do not contain the secret', () => {
      const secret = generateSecret(SECRET_PREFIX.clientSecret);
      const hash = hashSecret(secret);
      expect(hash).toMatch(/^[0-9a-f]{64}$/);
      expect(hash).not.toContain(secret.slice(SECRET_PREFIX.clientSecret.length, 20));
      expect(hashSecret(secret)).toBe(hash);
      expect(hashSecret(`${secret}x`)).not.toBe(hash);
    });
  });

  describe(constantTimeEqual.name, () => {
    it.each([
      ['equal strings', 'abc', 'abc', true],
      ['two empty strings', '', '', true],
      ['equal digests', hashSecret('x'), hashSecret('x'), true],
      ['one character differs', 'abc', 'abd', false],
      ['different case', 'ABC', 'abc', false],
      ['a shorter string that is a prefix', 'ab', 'abc', false],
      ['a longer string that extends it', 'abcd', 'abc', false],
      ['an empty and a non-empty string', '', 'a', false],
      ['different digests', hashSecret('x'), hashSecret('y'), false],
    ])('%s → %s', (_case, a, b, expected) => {
      expect(constantTimeEqual(a, b)).toBe(expected);
      expect(constantTimeEqual(b, a)).toBe(expected);
    });
  });

  describe(secretMatchesHash.name, () => {
    const secret = generateSecret(SECRET_PREFIX.refreshToken);
    const stored = hashSecret(secret);

    it('accepts the secret whose hash is stored', () => {
      expect(secretMatchesHash(secret, stored)).toBe(true);
    });

    it.each([
      ['another secret', generateSecret(SECRET_PREFIX.refreshToken)],
      ['the secret with one more character', `${secret}A`],
      ['the secret without its last character', secret.slice(0, -1)],
      ['the stored hash itself', stored],
      ['an empty string', ''],
    ])('refuses %s', (_case, presented) => {
      expect(secretMatchesHash(presented, stored)).toBe(false);
    });
  });
});
