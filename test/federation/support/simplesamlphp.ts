/**
 * A real SAML 2.0 identity provider for the tests: Debian's SimpleSAMLphp (apt-get install
 * simplesamlphp php-cli php-xml php-mbstring), configured into a temporary directory (its config
 * directory through SIMPLESAMLPHP_CONFIG_DIR, its metadata, keys, sessions and logs beside it) and
 * served by PHP's built-in server from the package's www directory. No file of the package is
 * changed; /etc/simplesamlphp is not read.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { freePort } from '../../helpers/app-at-issuer.js';

/** Where Debian installs SimpleSAMLphp (the package's www/ is the document root). */
const SIMPLESAMLPHP = '/usr/share/simplesamlphp';

/** The one person the IdP knows (exampleauth:UserPass). */
export const SAML_TEST_USER = {
  username: 'ana',
  password: 'ana-password',
  uid: 'ana',
  mail: 'ana@contoso.example',
  givenName: 'Ana',
  sn: 'Lima',
  displayName: 'Ana Lima',
};

/** Our SP as the IdP knows it (saml20-sp-remote). */
export interface RemoteSp {
  entityId: string;
  acs: string;
  slo: string;
  /** Our SP's signing certificate (PEM): then SimpleSAMLphp checks our LogoutRequests' signatures (validate.logout). */
  signingCertificate?: string;
  /** The binding SimpleSAMLphp sends its Single Logout messages to our SP with (HTTP-Redirect unless said). */
  sloBinding?: 'redirect' | 'post';
}

/** A PEM certificate's base64 body, as SimpleSAMLphp's certData and metadata's X509Certificate hold it. */
function certData(pem: string): string {
  return pem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, '');
}

/** A PHP single-quoted string literal. */
function php(value: string): string {
  return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/** The multi-valued attribute the test user's groups are sent in (Entra ID's and ADFS's groups claim URI; SimpleSAMLphp's memberOf mapped to it). */
export const SAML_GROUPS_ATTRIBUTE = 'http://schemas.microsoft.com/ws/2008/06/identity/claims/groups';

/** SimpleSAMLphp's authsources.php: the test user with `groups` as memberOf (none: no memberOf attribute at all). */
function authsources(groups: readonly string[]): string {
  const user = SAML_TEST_USER;
  const memberOf = groups.length > 0 ? `, 'memberOf' => [${groups.map(php).join(', ')}]` : '';
  return `<?php
$config = [
  'example-userpass' => ['exampleauth:UserPass',
    ${php(`${user.username}:${user.password}`)} => ['uid' => [${php(user.uid)}], 'mail' => [${php(user.mail)}], 'givenName' => [${php(user.givenName)}], 'sn' => [${php(user.sn)}], 'displayName' => [${php(user.displayName)}]${memberOf}],
  ],
];
`;
}

export class SimpleSamlPhp {
  private constructor(
    readonly baseUrl: string,
    private readonly dir: string,
    private readonly child: ChildProcess,
  ) {}

  /** Changes the test user's groups (its memberOf); PHP reads the file at each request (OPcache is off), so the next sign-in carries them. */
  setGroups(groups: readonly string[]): void {
    writeFileSync(join(this.dir, 'config', 'authsources.php'), authsources(groups));
  }

  /** The IdP's metadata URL (SimpleSAMLphp's entity ID too). */
  get metadataUrl(): string {
    return `${this.baseUrl}/saml2/idp/metadata.php`;
  }

  /**
   * `host`: the name its URLs carry, 127.0.0.1 unless said; it listens on 127.0.0.1 either way
   * (where localhost resolves). Cookies' SameSite compares sites (RFC 6265bis §5.2), and a site is
   * a scheme and a host, without the port (HTML, "sites"): an IdP at 127.0.0.1 is same-site with
   * Latchkey there, so a real browser would send our Lax cookie along with its POST. At localhost
   * it is another site, as a company's IdP is. (Latchkey takes plain http only from localhost, 127.0.0.1 and [::1].)
   */
  static async start(sp: RemoteSp, options: { host?: '127.0.0.1' | 'localhost'; groups?: readonly string[] } = {}): Promise<SimpleSamlPhp> {
    const host = options.host ?? '127.0.0.1';
    const port = await freePort();
    const baseUrl = `http://${host}:${port}`;
    const dir = mkdtempSync(join(tmpdir(), 'latchkey-simplesamlphp-'));
    for (const sub of ['config', 'metadata', 'cert', 'data', 'tmp', 'log', 'sessions']) mkdirSync(join(dir, sub));
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', join(dir, 'cert', 'idp.key'), '-out', join(dir, 'cert', 'idp.crt'), '-days', '2', '-subj', '/CN=simplesamlphp-test-idp'], { stdio: 'ignore' });
    writeFileSync(
      join(dir, 'config', 'config.php'),
      `<?php
$config = [
  'baseurlpath' => ${php(`${baseUrl}/`)},
  'certdir' => ${php(join(dir, 'cert') + '/')},
  'loggingdir' => ${php(join(dir, 'log') + '/')},
  'datadir' => ${php(join(dir, 'data') + '/')},
  'tempdir' => ${php(join(dir, 'tmp'))},
  'metadatadir' => ${php(join(dir, 'metadata') + '/')},
  'attributenamemapdir' => ${php(join(SIMPLESAMLPHP, 'config', 'attributemap') + '/')},
  'secretsalt' => ${php(randomBytes(16).toString('hex'))},
  'auth.adminpassword' => ${php(randomBytes(16).toString('hex'))},
  'technicalcontact_name' => 'Test', 'technicalcontact_email' => 'na@example.org',
  'timezone' => 'UTC',
  'enable.saml20-idp' => true,
  'module.enable' => ['exampleauth' => true, 'core' => true, 'saml' => true],
  'logging.handler' => 'file', 'logging.level' => SimpleSAML\\Logger::WARNING, 'logging.logfile' => 'simplesamlphp.log',
  'store.type' => 'phpsession',
  'session.phpsession.savepath' => ${php(join(dir, 'sessions'))},
  // Plain http on loopback: cookies without Secure, and no SameSite=None (which needs Secure).
  'session.cookie.secure' => false, 'session.cookie.samesite' => null, 'language.cookie.secure' => false,
  'showerrors' => true, 'errorreporting' => false, 'admin.checkforupdates' => false,
  // Where its logout may send the browser back to (ReturnTo): our server.
  'trusted.url.domains' => [${php(new URL(sp.acs).host)}, ${php(new URL(sp.acs).hostname)}],
];
`,
    );
    writeFileSync(join(dir, 'config', 'authsources.php'), authsources(options.groups ?? []));
    writeFileSync(
      join(dir, 'metadata', 'saml20-idp-hosted.php'),
      `<?php
$metadata['__DYNAMIC:1__'] = ['host' => '__DEFAULT__', 'privatekey' => 'idp.key', 'certificate' => 'idp.crt', 'auth' => 'example-userpass', 'sign.logout' => true];
`,
    );
    // Our SP: persistent NameID from uid, and the attributes under the claim names Entra ID and ADFS
    // send (Latchkey's default SAML mapping), the originals kept (%duplicate) for the NameID.
    writeFileSync(
      join(dir, 'metadata', 'saml20-sp-remote.php'),
      `<?php
$metadata[${php(sp.entityId)}] = [
  'AssertionConsumerService' => [['Binding' => 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST', 'Location' => ${php(sp.acs)}]],
  'SingleLogoutService' => [['Binding' => ${php(`urn:oasis:names:tc:SAML:2.0:bindings:${sp.sloBinding === 'post' ? 'HTTP-POST' : 'HTTP-Redirect'}`)}, 'Location' => ${php(sp.slo)}]],
  'NameIDFormat' => 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent',
  'simplesaml.nameidattribute' => 'uid',
  ${sp.signingCertificate ? `'certData' => ${php(certData(sp.signingCertificate))},` : "'validate.logout' => false,"}
  'authproc' => [10 => ['class' => 'core:AttributeMap', '%duplicate',
    'uid' => 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/name',
    'mail' => 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress',
    'givenName' => 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/givenname',
    'sn' => 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/surname',
    'displayName' => 'http://schemas.microsoft.com/identity/claims/displayname',
    'memberOf' => ${php(SAML_GROUPS_ATTRIBUTE)},
  ]],
];
`,
    );
    // OPcache applies to the built-in server (SAPI cli-server: opcache.enable, not enable_cli, which
    // Debian turns on), and it looks at a file again at most every revalidate_freq (2) seconds: a
    // setGroups() within that window would be served the old authsources.php. Off for this IdP.
    const child = spawn('php', ['-d', 'opcache.enable=0', '-S', `127.0.0.1:${port}`, '-t', join(SIMPLESAMLPHP, 'www')], {
      cwd: join(SIMPLESAMLPHP, 'www'),
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', SIMPLESAMLPHP_CONFIG_DIR: join(dir, 'config') },
      stdio: ['ignore', 'ignore', 'ignore'],
    });
    const idp = new SimpleSamlPhp(baseUrl, dir, child);
    await idp.waitUntilServing();
    return idp;
  }

  /** SimpleSAMLphp's own log (warnings and errors), for a failing test's message. */
  log(): string {
    try {
      return readFileSync(join(this.dir, 'log', 'simplesamlphp.log'), 'utf8');
    } catch {
      return '';
    }
  }

  async stop(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      const exited = new Promise((resolve) => this.child.once('exit', resolve));
      this.child.kill('SIGTERM');
      await exited;
    }
    rmSync(this.dir, { recursive: true, force: true });
  }

  private async waitUntilServing(): Promise<void> {
    const deadline = Date.now() + 10_000;
    let last = '';
    while (Date.now() < deadline) {
      if (this.child.exitCode !== null) throw new Error(`php -S exited (${this.child.exitCode}): is php-cli installed?`);
      try {
        const response = await fetch(this.metadataUrl);
        const body = await response.text();
        if (response.status === 200 && body.includes('IDPSSODescriptor')) return;
        last = `${response.status} ${body.slice(0, 200)}`;
      } catch (error) {
        last = String(error);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`SimpleSAMLphp did not serve its metadata within 10 s (${last})\n${this.log()}`);
  }
}
