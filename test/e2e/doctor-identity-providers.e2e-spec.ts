/**
 * Issue 45, "Operations": `latchkey doctor` checks each upstream identity provider, as a sign-in
 * through it would meet it now. The company's provider is node-oidc-provider in its own process;
 * the others are what goes wrong in deployments: an issuer nobody answers at, an issuer typed
 * differently from what the provider calls itself, a secret variable not set, a provider whose
 * clock is off, SAML metadata with a certificate about to expire or expired.
 */
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportJWK, generateKeyPair } from 'jose';
import { IdentityProvidersService, type IdentityProviderInput } from '../../src/identity-providers/identity-providers.service.js';
import { freePort, startAtIssuer } from '../helpers/app-at-issuer.js';
import { runCli } from '../helpers/cli.js';
import { dropTestDatabase } from '../helpers/test-database.js';
import { UpstreamOpenIdProvider } from '../federation/support/upstream-openid-provider.js';

interface Check {
  id: string;
  status: 'ok' | 'warn' | 'fail' | 'skip';
  detail: string;
  fix?: string;
}

const SECRET = 'contoso-secret-doctor-must-never-print-0123456789';
/** The environment every instance has: the secret of one provider, the loopback upstreams allowed, a small pool (doctor.e2e-spec.ts says why). */
const INSTANCE_ENV = { CONTOSO_SECRET: SECRET, OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true', DATABASE_POOL_SIZE: '2' };
const DAY_MS = 24 * 60 * 60 * 1000;

async function doctor(env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string; idps: Map<string, Check> }> {
  const result = await runCli(['doctor', '--json'], { env: { ...INSTANCE_ENV, ...env } });
  const checks = (JSON.parse(result.stdout) as { checks: Check[] }).checks;
  return { ...result, idps: new Map(checks.filter((check) => check.id.startsWith('idp:')).map((check) => [check.id, check])) };
}

/** A self-signed certificate valid from `notBefore` to `notAfter`, as its base64 DER (what SAML metadata carries); `openssl ca` is what can date one in the past. */
function certificate(dir: string, name: string, notBefore: Date, notAfter: Date): string {
  const at = (date: Date): string => `${date.toISOString().replace(/[-:T]/g, '').slice(0, 14)}Z`;
  const config = join(dir, `${name}.cnf`);
  writeFileSync(join(dir, `${name}.index`), '');
  writeFileSync(join(dir, `${name}.serial`), '01\n');
  writeFileSync(config, `[ca]\ndefault_ca = d\n[d]\ndatabase = ${dir}/${name}.index\nserial = ${dir}/${name}.serial\nnew_certs_dir = ${dir}\ndefault_md = sha256\npolicy = p\n[p]\ncommonName = supplied\n`);
  const key = join(dir, `${name}.key`);
  execFileSync('openssl', ['req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', key, '-out', join(dir, `${name}.csr`), '-subj', `/CN=${name}`], { stdio: 'ignore' });
  execFileSync('openssl', ['ca', '-batch', '-selfsign', '-notext', '-config', config, '-keyfile', key, '-in', join(dir, `${name}.csr`), '-out', join(dir, `${name}.pem`), '-startdate', at(notBefore), '-enddate', at(notAfter)], { stdio: 'ignore' });
  return readFileSync(join(dir, `${name}.pem`), 'utf8').replace(/-----[A-Z ]+-----|\s/g, '');
}

/** SAML Metadata §2.4.3: an IdP with one signing certificate. */
function idpMetadata(entityId: string, certificateDer: string): string {
  return `<?xml version="1.0"?>
<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" xmlns:ds="http://www.w3.org/2000/09/xmldsig#" entityID="${entityId}">
  <md:IDPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">
    <md:KeyDescriptor use="signing"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>${certificateDer}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>
    <md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="${entityId}/sso"/>
  </md:IDPSSODescriptor>
</md:EntityDescriptor>
`;
}

/** A provider whose clock is five minutes behind: a discovery document and a JWK Set, each with its own Date header. */
async function skewedProvider(): Promise<{ server: Server; issuer: string }> {
  const { publicKey } = await generateKeyPair('ES256');
  const jwks = { keys: [{ ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' }] };
  const server = createServer((request, response) => {
    const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const body = request.url === '/.well-known/openid-configuration' ? { issuer, jwks_uri: `${issuer}/jwks`, authorization_endpoint: `${issuer}/authorize`, token_endpoint: `${issuer}/token` } : jwks;
    response.writeHead(200, { 'content-type': 'application/json', date: new Date(Date.now() - 5 * 60 * 1000).toUTCString() });
    response.end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, issuer: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

describe('doctor: the upstream identity providers', () => {
  let nest: NestFastifyApplication;
  let contoso: UpstreamOpenIdProvider;
  let skewed: { server: Server; issuer: string };
  let noProviders: Awaited<ReturnType<typeof doctor>>;
  let report: Awaited<ReturnType<typeof doctor>>;
  const files = mkdtempSync(join(tmpdir(), 'latchkey-doctor-idps-'));

  beforeAll(async () => {
    ({ nest } = await startAtIssuer());
    noProviders = await doctor();
    [contoso, skewed] = await Promise.all([UpstreamOpenIdProvider.start({}, [{ client_id: 'latchkey', client_secret: SECRET, redirect_uris: ['http://127.0.0.1:9/callback'] }]), skewedProvider()]);
    const now = Date.now();
    writeFileSync(join(files, 'soon.xml'), idpMetadata('https://adfs.soon.example/adfs', certificate(files, 'soon', new Date(now - 300 * DAY_MS), new Date(now + 10 * DAY_MS))));
    writeFileSync(join(files, 'expired.xml'), idpMetadata('https://adfs.expired.example/adfs', certificate(files, 'expired', new Date(now - 400 * DAY_MS), new Date(now - 2 * DAY_MS))));
    writeFileSync(join(files, 'fresh.xml'), idpMetadata('https://adfs.fresh.example/adfs', certificate(files, 'fresh', new Date(now - DAY_MS), new Date(now + 400 * DAY_MS))));
    writeFileSync(join(files, 'not-a-key.pem'), 'not a key\n');
    const secret = (env: string) => ({ method: 'client_secret_basic', secret: { env } });
    const providers: IdentityProviderInput[] = [
      { id: 'contoso', displayName: 'Contoso', protocol: 'oidc', settings: { issuer: contoso.issuer, clientId: 'latchkey', clientAuth: secret('CONTOSO_SECRET') } },
      { id: 'offline', displayName: 'Offline', protocol: 'oidc', settings: { issuer: `http://127.0.0.1:${await freePort()}`, clientId: 'latchkey' } },
      { id: 'retired', displayName: 'Retired', protocol: 'oidc', enabled: false, settings: { issuer: `http://127.0.0.1:${await freePort()}`, clientId: 'latchkey' } },
      // The same provider, its issuer typed with another host name than the one it calls itself by.
      { id: 'typo', displayName: 'Typo', protocol: 'oidc', settings: { issuer: contoso.issuer.replace('127.0.0.1', 'localhost'), clientId: 'latchkey', clientAuth: secret('CONTOSO_SECRET') } },
      { id: 'unset', displayName: 'Unset', protocol: 'oidc', settings: { issuer: contoso.issuer, clientId: 'latchkey', clientAuth: secret('LATCHKEY_DOCTOR_UNSET_SECRET') } },
      { id: 'bad-key', displayName: 'Bad key', protocol: 'oidc', settings: { issuer: contoso.issuer, clientId: 'latchkey', clientAuth: { method: 'private_key_jwt', key: { file: join(files, 'not-a-key.pem') } } } },
      { id: 'skewed', displayName: 'Skewed', protocol: 'oidc', settings: { issuer: skewed.issuer, clientId: 'latchkey' } },
      { id: 'adfs-fresh', displayName: 'Fresh ADFS', protocol: 'saml', settings: { metadataFile: join(files, 'fresh.xml') } },
      { id: 'adfs-soon', displayName: 'Soon ADFS', protocol: 'saml', settings: { metadataFile: join(files, 'soon.xml') } },
      { id: 'adfs-expired', displayName: 'Expired ADFS', protocol: 'saml', settings: { metadataFile: join(files, 'expired.xml') } },
      { id: 'adfs-missing', displayName: 'Missing ADFS', protocol: 'saml', settings: { metadataFile: join(files, 'missing.xml') } },
    ];
    for (const provider of providers) await nest.get(IdentityProvidersService).create(provider, 'test');
    report = await doctor();
  }, 60_000);

  afterAll(async () => {
    await contoso?.stop();
    await new Promise((resolve) => skewed?.server.close(resolve));
    await nest?.close();
    await dropTestDatabase();
  });

  it('lists no identity provider entry when none is configured', () => {
    expect(noProviders.code).toBe(0);
    expect([...noProviders.idps.keys()]).toEqual([]);
  });

  it('lists one entry per provider, enabled or not, in the shape of the other checks, and fails the run', () => {
    expect(report.code).toBe(1);
    expect(report.stderr).toBe('');
    expect([...report.idps.keys()].sort()).toEqual(['adfs-expired', 'adfs-fresh', 'adfs-missing', 'adfs-soon', 'bad-key', 'contoso', 'offline', 'retired', 'skewed', 'typo', 'unset'].map((id) => `idp:${id}`));
    for (const check of report.idps.values()) expect(Object.keys(check).sort()).toEqual(check.status === 'ok' ? ['detail', 'id', 'status'] : ['detail', 'fix', 'id', 'status']);
  });

  it('a reachable provider announcing its issuer as configured, with keys, our secret there and its clock with ours: ok', () => {
    const check = report.idps.get('idp:contoso')!;
    expect(check).toEqual({ id: 'idp:contoso', status: 'ok', detail: expect.any(String) });
    expect(check.detail).toMatch(/^Contoso \(OpenID Connect, enabled\): /);
    expect(check.detail).toContain(`${contoso.issuer}/.well-known/openid-configuration answers, announcing the issuer as configured. Its JWK Set holds 1 signing key(s).`);
    expect(check.detail).toMatch(/ Its clock is [01] s (ahead of|behind) this host's\. /);
    expect(check.detail).toMatch(/Its client secret \(environment variable CONTOSO_SECRET\) is there\.$/);
  });

  it('an issuer nobody answers at: fail, naming the URL and the error', () => {
    expect(report.idps.get('idp:offline')).toMatchObject({
      status: 'fail',
      detail: expect.stringMatching(/^Offline \(OpenID Connect, enabled\): http:\/\/127\.0\.0\.1:\d+\/\.well-known\/openid-configuration cannot be reached \(connect ECONNREFUSED 127\.0\.0\.1:\d+\)\./),
      fix: expect.stringContaining('DNS, and the firewall'),
    });
  });

  it('a disabled provider is checked too, and says it is disabled: its failure is a warning until it is enabled', () => {
    expect(report.idps.get('idp:retired')).toMatchObject({
      status: 'warn',
      detail: expect.stringMatching(/^Retired \(OpenID Connect, disabled: not offered, nobody signs in through it\): .* cannot be reached/),
      fix: expect.stringContaining('Until then, leave it disabled.'),
    });
  });

  it('an issuer that is not the one the provider announces: fail, with both named and the command that fixes it', () => {
    const typo = contoso.issuer.replace('127.0.0.1', 'localhost');
    expect(report.idps.get('idp:typo')).toMatchObject({
      status: 'fail',
      detail: expect.stringContaining(`${typo}/.well-known/openid-configuration announces the issuer "${contoso.issuer}", but the provider is configured with ${typo}: every sign-in would be refused`),
      fix: `If the announced issuer is the provider you mean, configure exactly that: idps:update --issuer ${contoso.issuer}.`,
    });
  });

  it('a secret referenced in a variable that is not set: fail, naming the variable; no secret is printed anywhere', () => {
    expect(report.idps.get('idp:unset')).toMatchObject({
      status: 'fail',
      detail: expect.stringContaining('Its client secret cannot be read: the environment variable LATCHKEY_DOCTOR_UNSET_SECRET is not set.'),
      fix: expect.stringContaining('idps:update --client-secret-env or --client-secret-file'),
    });
    // The discovery part of the same provider still passes: the entry says what is wrong, not everything.
    expect(report.idps.get('idp:unset')!.detail).toContain('announcing the issuer as configured');
    expect(report.stdout).not.toContain(SECRET);
    expect(report.stdout).not.toContain('not a key');
  });

  it('a private key file that holds no key: fail', () => {
    expect(report.idps.get('idp:bad-key')).toMatchObject({ status: 'fail', detail: expect.stringContaining(`Its private key (file ${join(files, 'not-a-key.pem')}) is neither a private JWK nor a PKCS#8 PEM.`) });
  });

  it('a provider whose clock is five minutes off: a warning, with the offset', () => {
    expect(report.idps.get('idp:skewed')).toMatchObject({
      status: 'warn',
      detail: expect.stringMatching(/Its clock is (29[89]|30[012]) s behind this host's\. ID tokens' times/),
      fix: expect.stringContaining('Run NTP'),
    });
  });

  it('SAML metadata: certificates valid, expiring within 30 days (warn), expired (fail); a metadata file missing (fail)', () => {
    expect(report.idps.get('idp:adfs-fresh')).toMatchObject({ status: 'ok', detail: expect.stringMatching(/^Fresh ADFS \(SAML 2\.0, enabled\): Its metadata \(.*fresh\.xml\) reads\. Its signing certificate is valid until \d{4}-\d{2}-\d{2}\.$/) });
    expect(report.idps.get('idp:adfs-soon')).toMatchObject({ status: 'warn', detail: expect.stringMatching(/Its signing certificate \(CN=soon\) expires on \d{4}-\d{2}-\d{2}, in (9|10) day\(s\)\./), fix: expect.stringContaining('new certificate') });
    expect(report.idps.get('idp:adfs-expired')).toMatchObject({ status: 'fail', detail: expect.stringMatching(/Its signing certificate \(CN=expired\) expired on \d{4}-\d{2}-\d{2}\./) });
    expect(report.idps.get('idp:adfs-missing')).toMatchObject({ status: 'fail', detail: expect.stringContaining(`The metadata file ${join(files, 'missing.xml')} cannot be read (ENOENT).`) });
  });

  it('goes through the outbound guard: without OUTBOUND_ALLOW_PRIVATE_NETWORKS a loopback provider is refused, and the fix says so', async () => {
    const guarded = await doctor({ OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'false' });
    expect(guarded.idps.get('idp:contoso')).toMatchObject({
      status: 'fail',
      detail: expect.stringContaining('refused to connect to 127.0.0.1'),
      fix: expect.stringContaining('set OUTBOUND_ALLOW_PRIVATE_NETWORKS=true'),
    });
  });

  it('prints them for people too, one line each with the fix under a problem', async () => {
    const result = await runCli(['doctor'], { env: INSTANCE_ENV });
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/^ok {4}idp:contoso +Contoso \(OpenID Connect, enabled\): /m);
    expect(result.stdout).toMatch(/^FAIL {2}idp:unset +Unset .*LATCHKEY_DOCTOR_UNSET_SECRET is not set\.\n +fix: Set it where every instance reads it/m);
    expect(result.stdout).not.toContain(SECRET);
  });
});
