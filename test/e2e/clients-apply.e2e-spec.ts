import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { AuditEvent } from '../../src/audit/audit-event.entity.js';
import { Client } from '../../src/clients/client.entity.js';
import { ClientsService } from '../../src/clients/clients.service.js';
import { GrantType } from '../../src/common/oauth.constants.js';
import { runCli, type CliResult } from '../helpers/cli.js';
import { clientCredentialsStatus } from '../helpers/oauth-flow.js';
import { TestApp } from '../helpers/test-app.js';

/**
 * Issue 36, "clients as code": `npx latchkey clients:apply -f clients.yaml` makes the registered
 * clients match a document kept in version control. The CLI runs as its own process on this
 * file's database while the server runs on it too; the server sees every change at once.
 */

interface Applied {
  dry_run: boolean;
  applied: boolean;
  summary: Record<string, number>;
  plan: { client_id: string; client_name: string; action: string; changes?: Record<string, unknown> }[];
}

const newSecret = (): string => randomBytes(32).toString('base64url');

describe('clients:apply', () => {
  let app: TestApp;
  let dir: string;
  const secrets = { REPORTS_SECRET: newSecret(), WEB_SECRET: newSecret() };
  const printed: string[] = [];

  beforeAll(async () => {
    app = await TestApp.start();
    dir = await mkdtemp(join(tmpdir(), 'latchkey-clients-'));
  });
  afterAll(async () => {
    await app?.stop();
    await rm(dir, { recursive: true, force: true });
    // No secret was printed, on stdout or stderr, by any run.
    for (const secret of Object.values(secrets)) expect(printed.join('\n')).not.toContain(secret);
  });

  const clients = (): Promise<Client[]> => app.dataSource.getRepository(Client).find({ order: { id: 'ASC' } });

  async function apply(document: unknown, args: string[] = [], name = 'clients.yaml', env: Record<string, string> = secrets): Promise<CliResult> {
    const path = join(dir, name);
    await writeFile(path, name.endsWith('.json') ? JSON.stringify(document) : stringify(document));
    const result = await runCli(['clients:apply', '-f', path, ...args], { env });
    printed.push(result.stdout, result.stderr);
    return result;
  }

  const reports = { client_id: 'reports', client_name: 'Reports', grant_types: ['client_credentials'], scope: 'tokens:introspect', client_secret: { env: 'REPORTS_SECRET' } };
  const web = { client_id: 'web-app', client_name: 'Web app', redirect_uris: ['https://app.example.com/callback'], grant_types: ['authorization_code', 'refresh_token'], scope: 'notes:read', client_secret: { env: 'WEB_SECRET' } };
  const spa = { client_id: 'spa', client_name: 'Single page', token_endpoint_auth_method: 'none', redirect_uris: ['https://spa.example.com/cb'] };

  it('prints the plan and changes nothing with --dry-run', async () => {
    const result = await apply({ clients: [reports, web, spa] }, ['--dry-run']);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ dry_run: true, applied: false, summary: { create: 3, update: 0, delete: 0, unchanged: 0, keep: 0 } });
    expect(result.stderr).toContain('(dry run: nothing is applied)');
    expect(result.stderr).toMatch(/\+ create +web-app \("Web app"\)/);
    expect(await clients()).toEqual([]);
  });

  it('creates the clients with the ids and secrets the document names, in one run', async () => {
    const result = await apply({ clients: [reports, web, spa] });
    expect(result.code).toBe(0);
    const output = JSON.parse(result.stdout) as Applied;
    expect(output).toMatchObject({ applied: true, summary: { create: 3 } });
    expect((await clients()).map((c) => [c.id, c.name, c.tokenEndpointAuthMethod])).toEqual([
      ['reports', 'Reports', 'client_secret_basic'],
      ['spa', 'Single page', 'none'],
      ['web-app', 'Web app', 'client_secret_basic'],
    ]);
    // The secret from the environment is the client's: the server takes it at once.
    expect(await clientCredentialsStatus(app.baseUrl, { clientId: 'reports', clientSecret: secrets.REPORTS_SECRET, redirectUri: '' })).toBe(200);
    const audited = await app.dataSource.getRepository(AuditEvent).findBy({ action: 'client.registered', actor: 'cli' });
    expect(audited.map((e) => e.subject).sort()).toEqual(['client:reports', 'client:spa', 'client:web-app']);
  });

  it('is idempotent: a second run finds every client unchanged and writes nothing', async () => {
    const before = await clients();
    const result = await apply({ clients: [reports, web, spa] });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ summary: { create: 0, update: 0, delete: 0, unchanged: 3, keep: 0 } });
    expect(await clients()).toEqual(before);
  });

  it('updates redirect URIs and rotates a secret read from a file, showing which fields change but no secret', async () => {
    const rotated = newSecret();
    secrets.REPORTS_SECRET = rotated;
    const file = join(dir, 'reports.secret');
    await writeFile(file, `${rotated}\n`);
    const result = await apply({ clients: [{ ...reports, client_secret: { file: 'reports.secret' } }, { ...web, redirect_uris: ['https://app.example.com/callback', 'https://app.example.com/v2/callback'] }, spa] }, [], 'clients.json');
    expect(result.code).toBe(0);
    const output = JSON.parse(result.stdout) as Applied;
    expect(output.plan).toEqual(
      expect.arrayContaining([
        { client_id: 'reports', client_name: 'Reports', action: 'update', changes: { client_secret: 'changed' } },
        { client_id: 'web-app', client_name: 'Web app', action: 'update', changes: { redirect_uris: { old: ['https://app.example.com/callback'], new: ['https://app.example.com/callback', 'https://app.example.com/v2/callback'] } } },
        { client_id: 'spa', client_name: 'Single page', action: 'unchanged' },
      ]),
    );
    expect(result.stderr).toMatch(/~ update +reports \("Reports"\): client_secret/);
    expect((await app.dataSource.getRepository(Client).findOneByOrFail({ id: 'web-app' })).redirectUris).toHaveLength(2);
    expect(await clientCredentialsStatus(app.baseUrl, { clientId: 'reports', clientSecret: rotated, redirectUri: '' })).toBe(200);
  });

  it('deletes clients the document does not list, and keeps them with --keep-unlisted', async () => {
    const kept = await apply({ clients: [reports, web].map((c) => (c === reports ? { ...c, client_secret: { file: 'reports.secret' } } : { ...web, redirect_uris: ['https://app.example.com/callback', 'https://app.example.com/v2/callback'] })) }, ['--keep-unlisted']);
    expect(JSON.parse(kept.stdout)).toMatchObject({ summary: { unchanged: 2, keep: 1, delete: 0 } });
    expect(kept.stderr).toMatch(/· keep +spa .*kept because of --keep-unlisted/);
    expect((await clients()).map((c) => c.id)).toContain('spa');
    const pruned = await apply({ clients: [{ ...reports, client_secret: { file: 'reports.secret' } }] });
    expect(pruned.code).toBe(0);
    expect(JSON.parse(pruned.stdout)).toMatchObject({ summary: { unchanged: 1, delete: 2 } });
    expect((await clients()).map((c) => c.id)).toEqual(['reports']);
  });

  it('writes a plan in one transaction: when one write fails, none is kept', async () => {
    const before = await clients();
    const service = app.app.get(ClientsService);
    const { client: fresh } = await service.draft({ name: 'Fresh', redirectUris: [], grantTypes: [GrantType.ClientCredentials], scope: 'tokens:introspect' }, { clientId: 'fresh', secret: newSecret() });
    // A second client whose registration token hash is the first one's: its INSERT fails on the unique index, after the first one's.
    const { client: clash } = await service.draft({ name: 'Clash', redirectUris: [], grantTypes: [GrantType.ClientCredentials], scope: 'tokens:introspect' }, { clientId: 'clash', secret: newSecret(), registrationToken: 'the same token' });
    fresh.registrationTokenHash = clash.registrationTokenHash;
    await expect(service.applyAll({ create: [fresh, clash], update: [], remove: [] })).rejects.toThrow();
    expect(await clients()).toEqual(before);
  });

  it.each([
    ['a FAPI 2.0 violation', { ...web, client_id: 'fapi', security_profile: 'fapi2' }, /clients\[1\] \(fapi\): The registration does not meet the FAPI 2\.0 Security Profile/],
    ['a secret written into the document', { ...web, client_id: 'literal', client_secret: 'x'.repeat(40) }, /clients\[1\] \(literal\): client_secret must say where the secret is/],
    ['a misspelt field', { ...spa, client_id: 'typo', redirect_uri: 'https://spa.example.com/cb' }, /clients\[1\] \(typo\): unknown field\(s\) redirect_uri/],
    ['an unset variable', { ...web, client_id: 'unset', client_secret: { env: 'NOT_SET_ANYWHERE' } }, /clients\[1\] \(unset\): client_secret: the environment variable NOT_SET_ANYWHERE is not set/],
    ['a bad redirect URI', { ...spa, client_id: 'bad', redirect_uris: ['http://evil.example.com/cb'] }, /clients\[1\] \(bad\): .*redirect/i],
  ])('refuses %s with the client and the reason, and changes nothing', async (_, entry, message) => {
    const before = await clients();
    const result = await apply({ clients: [{ ...spa, client_id: 'would-be-created' }, entry] });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('the document cannot be applied, nothing was changed');
    expect(result.stderr).toMatch(message);
    expect(await clients()).toEqual(before);
  });

  it('refuses a document that is not a list of clients, or not YAML', async () => {
    expect(await apply({ client: [] })).toMatchObject({ code: 1, stderr: expect.stringContaining('the document must be an object with a "clients" list') });
    await writeFile(join(dir, 'broken.yaml'), 'clients: [\n');
    expect(await runCli(['clients:apply', '-f', join(dir, 'broken.yaml')])).toMatchObject({ code: 1, stderr: expect.stringContaining('is not valid YAML') });
    expect(await runCli(['clients:apply'])).toMatchObject({ code: 1, stderr: expect.stringContaining('--file is required') });
  });
});
