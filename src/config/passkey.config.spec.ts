import { passkeyConfig } from './passkey.config.js';
import { ConfigValidationError } from './validate-env.js';
import { clearEnvForEachTest } from '../../test/helpers/with-env.js';

const VARIABLES = ['ISSUER', 'PORT', 'PASSKEY_RP_ID'];

function problemsOf(factory: () => unknown): string[] {
  try {
    factory();
    return [];
  } catch (error) {
    if (error instanceof ConfigValidationError) return error.problems;
    throw error;
  }
}

describe('passkey configuration (PASSKEY_RP_ID)', () => {
  clearEnvForEachTest(VARIABLES);

  it("uses the issuer's host as RP ID and the issuer's origin exactly", () => {
    process.env.ISSUER = 'https://login.example.com/tenant';
    expect(passkeyConfig()).toMatchObject({ rpId: 'login.example.com', origin: 'https://login.example.com' });
  });

  it.each([
    ['the issuer host itself', 'https://login.example.com', 'login.example.com', 'login.example.com'],
    ['a parent domain', 'https://login.example.com', 'example.com', 'example.com'],
    ['upper case, read as lower case', 'https://login.example.com', 'Example.COM', 'example.com'],
    ['localhost, for development', 'http://localhost:3000', 'localhost', 'localhost'],
  ])('accepts %s', (_case, issuer, rpId, expected) => {
    Object.assign(process.env, { ISSUER: issuer, PASSKEY_RP_ID: rpId });
    expect(passkeyConfig().rpId).toBe(expected);
  });

  it.each([
    ['another domain', 'https://login.example.com', 'example.org', /neither the issuer's host login\.example\.com nor a parent domain/],
    ['a look-alike suffix', 'https://login.example.com', 'ample.com', /neither the issuer's host/],
    ['a top-level domain', 'https://login.example.com', 'com', /top-level domain/],
    ['a port', 'https://login.example.com', 'example.com:443', /not a host name/],
    ['an issuer on an IP address', 'https://192.0.2.10', '192.0.2.10', /IP address, where browsers refuse passkeys/],
  ])('refuses %s', (_case, issuer, rpId, message) => {
    Object.assign(process.env, { ISSUER: issuer, PASSKEY_RP_ID: rpId });
    const problems = problemsOf(() => passkeyConfig());
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^PASSKEY_RP_ID: /);
    expect(problems[0]).toMatch(message);
  });

  it.each(['https://192.0.2.10', 'http://127.0.0.1:3000', 'http://[::1]:3000'])('offers no passkeys at an issuer on an IP address (%s)', (issuer) => {
    process.env.ISSUER = issuer;
    expect(passkeyConfig().rpId).toBeNull();
  });
});
