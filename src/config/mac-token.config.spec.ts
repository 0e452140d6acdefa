import { macTokenConfig } from './mac-token.config.js';
import { ConfigValidationError } from './validate-env.js';
import { clearEnvForEachTest } from '../../test/helpers/with-env.js';

const VARIABLES = ['TOKEN_ENCRYPTION_KEY', 'MAC_TIMESTAMP_WINDOW_SECONDS'];

function problemsOf(factory: () => unknown): string[] {
  try {
    factory();
    return [];
  } catch (error) {
    if (error instanceof ConfigValidationError) return error.problems;
    throw error;
  }
}

describe('MAC token configuration (TOKEN_ENCRYPTION_KEY, MAC_TIMESTAMP_WINDOW_SECONDS)', () => {
  clearEnvForEachTest(VARIABLES);

  it('has no configured key (one is generated and kept in the database) and a 300-second window by default', () => {
    expect(macTokenConfig()).toEqual({ encryptionKeys: [], timestampWindowSeconds: 300 });
  });

  it('reads comma-separated base64 keys of 32 bytes, newest first', () => {
    const newest = Buffer.alloc(32, 1);
    const older = Buffer.alloc(32, 2);
    process.env.TOKEN_ENCRYPTION_KEY = `${newest.toString('base64')}, ${older.toString('base64')}`;
    expect(macTokenConfig().encryptionKeys).toEqual([newest, older]);
  });

  it.each([
    ['a key of 31 bytes', Buffer.alloc(31, 1).toString('base64')],
    ['a key of 33 bytes', Buffer.alloc(33, 1).toString('base64')],
    ['text that is not base64', 'not base64 at all, but long enough to be 32 bytes'],
    ['a good key followed by a bad one', `${Buffer.alloc(32, 1).toString('base64')},short`],
  ])('refuses %s, without printing it', (_case, value) => {
    process.env.TOKEN_ENCRYPTION_KEY = value;
    const problems = problemsOf(() => macTokenConfig());
    expect(problems).toEqual([expect.stringMatching(/^TOKEN_ENCRYPTION_KEY: /)]);
    expect(problems[0]).not.toContain(value);
  });

  it.each([['0'], ['3601'], ['soon']])('refuses MAC_TIMESTAMP_WINDOW_SECONDS=%s', (value) => {
    process.env.MAC_TIMESTAMP_WINDOW_SECONDS = value;
    const problems = problemsOf(() => macTokenConfig());
    expect(problems.length).toBeGreaterThan(0);
    for (const problem of problems) expect(problem).toMatch(/^MAC_TIMESTAMP_WINDOW_SECONDS: /);
  });

  it('reads MAC_TIMESTAMP_WINDOW_SECONDS', () => {
    process.env.MAC_TIMESTAMP_WINDOW_SECONDS = '60';
    expect(macTokenConfig().timestampWindowSeconds).toBe(60);
  });
});
