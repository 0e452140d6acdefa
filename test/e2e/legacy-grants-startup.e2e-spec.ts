/**
 * The implicit and password grants opted in with the admin CLI, and the warning the server logs at
 * start-up for each such client. In a file of its own: Nest's static Logger follows the first
 * application of a process, so the lines of a second one would go to the first one's output.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { PROJECT, runCli } from '../helpers/cli.js';
import { TestApp } from '../helpers/test-app.js';
import { createTestDatabase } from '../helpers/test-database.js';

async function cliJson(args: string[]): Promise<Record<string, unknown>> {
  const result = await runCli(args);
  expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
  return JSON.parse(result.stdout) as Record<string, unknown>;
}

describe('legacy grants: CLI opt-in and start-up warnings (RFC 9700 §2.1.2, §2.4)', () => {
  let app: TestApp;
  const lines: string[] = [];
  let plain: Record<string, unknown>;
  let implicit: Record<string, unknown>;
  let password: Record<string, unknown>;
  let both: Record<string, unknown>;

  beforeAll(async () => {
    await promisify(execFile)('npm', ['run', '-s', 'build'], { cwd: PROJECT });
    await createTestDatabase();
    // The administrator registers the clients before the server starts, as in production.
    plain = await cliJson(['clients:create', '--name', 'Plain', '--redirect-uri', 'https://plain.example/cb', '--scope', 'notes:read']);
    implicit = await cliJson(['clients:create', '--name', 'Old SPA', '--redirect-uri', 'https://spa.example/cb', '--scope', 'notes:read', '--grant-type', 'implicit']);
    password = await cliJson(['clients:create', '--name', 'Old Desktop', '--scope', 'notes:read', '--grant-type', 'password']);
    both = await cliJson(['clients:create', '--name', 'Everything', '--redirect-uri', 'https://all.example/cb', '--scope', 'notes:read',
      '--grant-type', 'authorization_code', '--grant-type', 'implicit', '--grant-type', 'password', '--grant-type', 'refresh_token']);
    app = await TestApp.start({}, { level: 'warn', destination: { write: (line: string) => void lines.push(line) } });
  }, 180_000);
  afterAll(async () => app?.stop());

  function warnings(): Record<string, unknown>[] {
    return lines
      .join('')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((line) => line.context === 'LegacyGrants');
  }

  describe('clients:create', () => {
    it('gives neither grant by default', () => {
      expect(plain).toMatchObject({ grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'] });
    });

    it('--grant-type implicit registers the implicit grant with the token response type (RFC 7591 §2.1)', () => {
      expect(implicit).toMatchObject({ grant_types: ['implicit'], response_types: ['token'] });
    });

    it('--grant-type password registers the password grant for a confidential client (a secret is issued)', () => {
      expect(password).toMatchObject({ grant_types: ['password'], response_types: [], client_secret: expect.stringMatching(/^lk_cs_/) });
    });

    it.each([
      ['the password grant for a public client', ['--name', 'Bad', '--scope', 'notes:read', '--public', '--grant-type', 'password'], /public client cannot use the password grant/],
      ['the implicit grant without a redirect URI', ['--name', 'Bad', '--scope', 'notes:read', '--grant-type', 'implicit'], /redirect URI is required for the implicit grant/],
    ])('refuses %s (exit 1)', async (_case, args, message) => {
      const result = await runCli(['clients:create', ...args]);
      expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 1, stdout: '' });
      expect(result.stderr).toMatch(message);
    });
  });

  describe('start-up', () => {
    it('logs one warning per opted-in client, naming the client and its legacy grants', () => {
      const found = warnings();
      expect(found).toHaveLength(3);
      for (const line of found) expect(line.level).toBe(40);
      const message = (client: Record<string, unknown>) => found.find((line) => String(line.msg).includes(client.client_id as string))?.msg;
      expect(message(implicit)).toMatch(/allowed the implicit grant,/);
      expect(message(password)).toMatch(/allowed the password grant,/);
      expect(message(both)).toMatch(/allowed the implicit and password grants/);
      expect(message(plain)).toBeUndefined();
    });

    it('never logs a client secret', () => {
      const text = lines.join('');
      for (const client of [implicit, password, both]) expect(text).not.toContain(client.client_secret as string);
    });
  });
});
