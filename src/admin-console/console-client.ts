import { Inject, Injectable } from '@nestjs/common';
import type { ClientEditor } from '../clients/client-change-policy.js';
import type { NewClient } from '../clients/client-information.js';
import type { Client } from '../clients/client.entity.js';
import { ClientsService } from '../clients/clients.service.js';
import { CONSOLE_CALLBACK_PATH, CONSOLE_CLIENT_ID } from '../clients/console-client-id.js';
import { ClientAuthMethod, GrantType } from '../common/oauth.constants.js';
import { splitScope } from '../common/scope.js';
import { secretMatchesHash } from '../common/secrets.js';
import { adminConsoleConfig, type AdminConsoleConfig } from '../config/admin-console.config.js';
import { appConfig, type AppConfig } from '../config/app.config.js';
import { ADMIN_SCOPES } from '../scopes/admin-scopes.js';
import { ConsoleKeys } from './console-keys.js';

/** Where the authorization endpoint sends the administrator back (first party there: clients/first-party.ts). */
export const CALLBACK_PATH = CONSOLE_CALLBACK_PATH;
/** Where RP-Initiated Logout sends them after the console's sign-out. */
export const SIGNED_OUT_PATH = '/admin/signed-out';
/** OpenID Connect and every admin scope: a person's sign-in carries only those their roles allow (AdminAccess's rule). */
export const CONSOLE_SCOPE = ['openid', ...Object.keys(ADMIN_SCOPES)].join(' ');

/** Who registers the console's client and keeps it right, as the audit log names it: an owner's act, as giving admin scopes always is. */
const CONSOLE_REGISTRAR: ClientEditor = { kind: 'administrator', actor: 'admin-console', owner: true };

/**
 * The console's own OpenID Connect client, registered on first use (issue 48): confidential
 * (client_secret_basic), the code flow with refresh tokens, its redirect and sign-out URIs under
 * the issuer, every admin scope, and a floor of ADMIN_CONSOLE_ACR (minimum_acr) that the token
 * endpoint holds every grant of it to, refreshes included.
 *
 * Its secret is derived, not stored (ConsoleKeys): the registration keeps only its hash, as for any
 * client, and every instance derives the same one. During a SESSION_SECRET rotation an instance
 * uses whichever of its secrets the registration holds; only when none does (the last instance
 * dropped the old secret) is the newest set, so instances part-way through a rotation never undo
 * each other. A registration someone changed (its redirect URI, its floor) is put back.
 */
@Injectable()
export class ConsoleClient {
  constructor(
    private readonly clients: ClientsService,
    private readonly keys: ConsoleKeys,
    @Inject(appConfig.KEY) private readonly app: AppConfig,
    @Inject(adminConsoleConfig.KEY) private readonly config: AdminConsoleConfig,
  ) {}

  get callbackUrl(): string {
    return this.app.issuer + CALLBACK_PATH;
  }

  get signedOutUrl(): string {
    return this.app.issuer + SIGNED_OUT_PATH;
  }

  /** The client id and the secret this instance authenticates with, the client registered or put right first when needed. */
  async credentials(): Promise<{ clientId: string; secret: string }> {
    const candidates = await this.keys.clientSecrets();
    const client = await this.registered(candidates[0]);
    const held = candidates.find((secret) => client.secretHash !== null && secretMatchesHash(secret, client.secretHash));
    if (held !== undefined) return { clientId: client.id, secret: held };
    await this.clients.rotateSecret(client.id, CONSOLE_REGISTRAR, candidates[0]);
    return { clientId: client.id, secret: candidates[0] };
  }

  private async registered(secret: string): Promise<Client> {
    const found = await this.clients.findById(CONSOLE_CLIENT_ID);
    if (found === null) {
      try {
        return (await this.clients.create(this.registration(), CONSOLE_REGISTRAR, { clientId: CONSOLE_CLIENT_ID, secret })).client;
      } catch (error) {
        // Another instance registered it at the same moment: theirs stands.
        const theirs = await this.clients.findById(CONSOLE_CLIENT_ID);
        if (theirs === null) throw error;
        return theirs;
      }
    }
    return this.drifted(found) ? this.clients.update(found, this.registration(), CONSOLE_REGISTRAR) : found;
  }

  private registration(): NewClient {
    return {
      name: 'Latchkey admin console',
      redirectUris: [this.callbackUrl],
      scope: CONSOLE_SCOPE,
      grantTypes: [GrantType.AuthorizationCode, GrantType.RefreshToken],
      tokenEndpointAuthMethod: ClientAuthMethod.ClientSecretBasic,
      openId: { post_logout_redirect_uris: [this.signedOutUrl], minimum_acr: this.config.acr, require_auth_time: true },
    };
  }

  private drifted(client: Client): boolean {
    return (
      JSON.stringify(client.redirectUris) !== JSON.stringify([this.callbackUrl]) ||
      sorted(splitScope(client.scope)) !== sorted(splitScope(CONSOLE_SCOPE)) ||
      client.minimumAcr !== this.config.acr ||
      JSON.stringify(client.openId.postLogoutRedirectUris) !== JSON.stringify([this.signedOutUrl]) ||
      sorted(client.grantTypes) !== sorted([GrantType.AuthorizationCode, GrantType.RefreshToken]) ||
      client.tokenEndpointAuthMethod !== ClientAuthMethod.ClientSecretBasic
    );
  }
}

function sorted(values: readonly string[]): string {
  return JSON.stringify([...values].sort());
}
