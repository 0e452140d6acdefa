/**
 * The company's OpenID Provider for the federation tests: node-oidc-provider in its own process
 * (test/fixtures/upstream/oidc-provider-idp.mjs), on a free loopback port, with the accounts and
 * clients a test gives it. `rotateKeys` restarts it on the same port with new signing keys, as an
 * upstream that rotated its keys looks from outside.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportJWK, generateKeyPair } from 'jose';
import { freePort } from '../../helpers/app-at-issuer.js';
import { PROJECT } from '../../helpers/cli.js';
import { stopServer } from '../../helpers/npm-start.js';

export interface UpstreamAccount {
  email?: string;
  email_verified?: boolean;
  name?: string;
  given_name?: string;
  family_name?: string;
  preferred_username?: string;
  /** Released with the `groups` scope: the names of the person's groups (or, to test that shape, one string of them). */
  groups?: string[] | string;
}

export interface UpstreamClient {
  client_id: string;
  client_secret?: string;
  redirect_uris: string[];
  post_logout_redirect_uris?: string[];
  backchannel_logout_uri?: string;
  backchannel_logout_session_required?: boolean;
  token_endpoint_auth_method?: string;
  token_endpoint_auth_signing_alg?: string;
  jwks?: { keys: unknown[] };
}

export class UpstreamOpenIdProvider {
  private process?: ChildProcess;
  kid = '';
  /** What the provider printed (its back-channel logout deliveries among it). */
  output = '';
  /** The accounts, in a file the provider reads at each use: setAccount changes a person's claims without a restart. */
  private readonly accountsFile = join(mkdtempSync(join(tmpdir(), 'latchkey-upstream-accounts-')), 'accounts.json');

  private constructor(
    readonly port: number,
    readonly issuer: string,
    private readonly accounts: Record<string, UpstreamAccount>,
    private readonly clients: UpstreamClient[],
  ) {}

  static async start(accounts: Record<string, UpstreamAccount>, clients: UpstreamClient[], options: { host?: string } = {}): Promise<UpstreamOpenIdProvider> {
    const port = await freePort();
    const provider = new UpstreamOpenIdProvider(port, `http://${options.host ?? '127.0.0.1'}:${port}`, { ...accounts }, clients);
    await provider.launch();
    return provider;
  }

  /** Restarts with new signing keys (and no sessions): the keys the last ID tokens were signed with are gone from its JWK Set. */
  async rotateKeys(): Promise<void> {
    await stopServer(this.process);
    await this.launch();
  }

  async stop(): Promise<void> {
    await stopServer(this.process);
    rmSync(join(this.accountsFile, '..'), { recursive: true, force: true });
  }

  /** Changes (or adds) an account's claims; the next sign-in and token see them (as a change in the company's directory). */
  setAccount(id: string, claims: UpstreamAccount): void {
    this.accounts[id] = claims;
    writeFileSync(this.accountsFile, JSON.stringify(this.accounts));
  }

  private async launch(): Promise<void> {
    writeFileSync(this.accountsFile, JSON.stringify(this.accounts));
    const { privateKey } = await generateKeyPair('RS256', { extractable: true });
    this.kid = `key-${Date.now()}`;
    const jwks = { keys: [{ ...(await exportJWK(privateKey)), kid: this.kid, alg: 'RS256', use: 'sig' }] };
    const child = spawn(process.execPath, [new URL('../../fixtures/upstream/oidc-provider-idp.mjs', import.meta.url).pathname], {
      cwd: PROJECT,
      env: { ...process.env, PORT: String(this.port), ISSUER_HOST: new URL(this.issuer).hostname, IDP_ACCOUNTS_FILE: this.accountsFile, IDP_CLIENTS: JSON.stringify(this.clients), IDP_KEYS: JSON.stringify(jwks), NODE_ENV: 'development' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.output = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (this.output += chunk));
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (this.output += chunk));
    for (let i = 0; i < 200 && !this.output.includes('listening'); i++) {
      if (child.exitCode !== null) throw new Error(`the upstream provider exited during start-up:\n${this.output}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    if (!this.output.includes('listening')) {
      await stopServer(child);
      throw new Error(`the upstream provider did not start:\n${this.output}`);
    }
    this.process = child;
  }
}
