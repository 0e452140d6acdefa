import { Injectable } from '@nestjs/common';
import { CLI_ADMINISTRATOR, type ClientEditor } from '../clients/client-change-policy.js';
import type { Client } from '../clients/client.entity.js';
import { ClientsService } from '../clients/clients.service.js';
import { DomainError } from '../common/domain-error.js';
import type { UpstreamProvider } from './identity-provider-settings.js';
import { IdentityProvidersService } from './identity-providers.service.js';

/** The ways a client's people may sign in: locally (password, passkey) or through these providers. */
export interface SignInWays {
  local: boolean;
  upstream: UpstreamProvider[];
}

/** How a session was made: locally, or through this upstream provider. */
export type SignedInVia = { local: true } | { idp: string };

/** What clients:sign-in prints. */
export interface ClientSignInRuleView {
  client_id: string;
  identity_providers: string[] | 'any';
  local_sign_in: boolean;
}

/**
 * Per-client sign-in restrictions (issue 45, Client.signInRule): which ways the sign-in page offers
 * for a client, and whether a session's way of signing in is one the client allows (the
 * authentication policy asks, with the client it already holds: no query).
 */
@Injectable()
export class SignInMethods {
  constructor(
    private readonly providers: IdentityProvidersService,
    private readonly clients: ClientsService,
  ) {}

  /** The ways offered for `client` (every enabled provider and the local sign-in when it has no rule, or when there is no client: the account pages). */
  async forClient(client: Pick<Client, 'signInRule'> | undefined): Promise<SignInWays> {
    const enabled = await this.providers.enabled();
    const rule = client?.signInRule ?? null;
    if (!rule) return { local: true, upstream: enabled };
    const allowed = rule.identityProviders;
    return { local: rule.localSignIn, upstream: allowed === null ? enabled : enabled.filter((provider) => allowed.includes(provider.id)) };
  }

  /** Whether a session made `via` this way may sign in to `client`. */
  allows(client: Pick<Client, 'signInRule'>, via: SignedInVia): boolean {
    const rule = client.signInRule;
    if (!rule) return true;
    if ('local' in via) return rule.localSignIn;
    return rule.identityProviders === null || rule.identityProviders.includes(via.idp);
  }

  /** The client's rule as clients:sign-in prints it (every way: no rule). */
  async ruleOf(clientId: string): Promise<ClientSignInRuleView> {
    return ruleView(await this.client(clientId));
  }

  /**
   * clients:sign-in and PUT /clients/{id}/sign-in: sets the client's rule; `identityProviders` null
   * allows every enabled one. At least one way must remain. The change, with the clients' rules (an
   * owner's on a client holding an owner-only scope) and its audit event, is ClientsService's.
   */
  async setRule(clientId: string, rule: { identityProviders: readonly string[] | null; localSignIn: boolean }, editor: ClientEditor = CLI_ADMINISTRATOR): Promise<ClientSignInRuleView> {
    await this.client(clientId);
    if (!rule.localSignIn && rule.identityProviders !== null && rule.identityProviders.length === 0) {
      throw new DomainError('invalid_identity_provider', 'A client needs at least one way to sign in: allow the local sign-in or an identity provider.');
    }
    for (const id of rule.identityProviders ?? []) {
      if (!(await this.providers.find(id))) throw new DomainError('identity_provider_not_found', `No identity provider ${JSON.stringify(id.slice(0, 64))}.`);
    }
    // Every way allowed is no rule at all.
    const unrestricted = rule.localSignIn && rule.identityProviders === null;
    const client = await this.clients.setSignInRule(clientId, unrestricted ? null : { identityProviders: rule.identityProviders ? [...new Set(rule.identityProviders)] : null, localSignIn: rule.localSignIn }, editor);
    return ruleView(client);
  }

  private async client(clientId: string): Promise<Client> {
    const client = await this.clients.findById(clientId);
    if (!client) throw new DomainError('client_not_found', `No client with id ${JSON.stringify(clientId.slice(0, 64))}.`);
    return client;
  }
}

function ruleView(client: Pick<Client, 'id' | 'signInRule'>): ClientSignInRuleView {
  const rule = client.signInRule;
  return { client_id: client.id, identity_providers: rule?.identityProviders ?? 'any', local_sign_in: rule?.localSignIn ?? true };
}
