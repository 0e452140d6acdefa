/**
 * The README's "Sign in from a terminal" walk-through against the server started as `npm start`
 * starts it (its environment, Node options and dist/src/main.js, in a child process), with the
 * client made by the admin CLI and the default interval of 5 seconds: the device's requests as
 * curl sends them (form posts), the person's as a browser's.
 */
import type { ChildProcess } from 'node:child_process';
import { decodeJwt } from 'jose';
import { Browser } from '../helpers/browser.js';
import { runCli } from '../helpers/cli.js';
import { decideDevice, DEVICE_CODE_GRANT, pollToken, requestDeviceAuthorization } from '../helpers/device.js';
import { startAsNpmStart, stopServer } from '../helpers/npm-start.js';
import { dropTestDatabase } from '../helpers/test-database.js';
import { expectTokenError } from '../helpers/token-assertions.js';

const USER = { username: 'terminal-user', password: 'correct horse battery staple' };

describe('Sign in from a terminal (RFC 8628) against `npm start`', () => {
  let server: ChildProcess;
  let issuer: URL;
  let clientId: string;

  beforeAll(async () => {
    ({ server, issuer } = await startAsNpmStart());
    expect((await runCli(['users:create', '--username', USER.username, '--password', USER.password])).code).toBe(0);
    const created = await runCli(['clients:create', '--name', 'My CLI', '--public', '--grant-type', DEVICE_CODE_GRANT, '--grant-type', 'refresh_token', '--scope', 'notes:read']);
    expect(created.code).toBe(0);
    clientId = (JSON.parse(created.stdout) as { client_id: string }).client_id;
  });
  afterAll(async () => {
    await stopServer(server);
    await dropTestDatabase();
  });

  it('device_authorization, the person approves at verification_uri, the poll after the interval gets the tokens', async () => {
    const client = { clientId, redirectUri: '' };
    const started = await requestDeviceAuthorization(issuer, client, { scope: 'openid notes:read' });
    expect(started.status).toBe(200);
    const { device_code, user_code, verification_uri, interval } = started.body as { device_code: string; user_code: string; verification_uri: string; interval: number };
    expect(verification_uri).toBe(`${issuer.origin}/device`);
    expect(interval).toBe(5);
    expectTokenError(await pollToken(issuer, client, device_code), 400, 'authorization_pending');

    await decideDevice(new Browser(issuer.origin), USER, user_code);
    await new Promise((resolve) => setTimeout(resolve, interval * 1000));
    const tokens = await pollToken(issuer, client, device_code);
    expect(tokens.status).toBe(200);
    expect(tokens.body).toMatchObject({ token_type: 'bearer', scope: 'notes:read openid', refresh_token: expect.stringMatching(/^lk_rt_/) });
    expect(decodeJwt(tokens.body.id_token as string)).toMatchObject({ iss: issuer.origin, aud: clientId });
    const notes = await fetch(new URL('/api/v1/notes', issuer), { headers: { authorization: `Bearer ${tokens.body.access_token as string}` } });
    expect(notes.status).toBe(200);
  });
});
