import { Clock } from '../common/clock.js';
import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { DEFAULT_SIGNING_ALGORITHM } from '../signing/signing-algorithms.js';
import type { Acr } from '../common/authentication-context.js';
import { DomainError } from '../common/domain-error.js';
import { ClientAuthMethod, GrantType, TokenType, type ResponseType } from '../common/oauth.constants.js';
import { formatScope, parseScope, splitScope } from '../common/scope.js';
import { generateSecret, hashSecret, SECRET_PREFIX, secretMatchesHash } from '../common/secrets.js';
import { AuditService } from '../audit/audit.service.js';
import { Transactions } from '../database/transactions.js';
import { ScopeCatalog } from '../scopes/scope-catalog.js';
import { assertNotWidenedBySelf, assertOwnerMayManage, assertOwnerScopesRespected, CLI_ADMINISTRATOR, type ClientEditor } from './client-change-policy.js';
import { Client, type ClientSignInRule, type GroupsClaimSetting } from './client.entity.js';
import { checkedResponseTypes, clientView, DESCRIPTIVE_FIELDS, descriptiveColumns, newClientId, responseTypesOfClient, type ClientView, type NewClient } from './client-information.js';
import { ClientStore, type ClientFilter } from './client.store.js';
import type { KeysetPage } from '../database/keyset-page.js';
import { ClientChanges } from './client-changes.js';
import { clientKeysFrom, type ClientKeys } from './client-keys.js';
import { SecurityProfiles } from './security-profile.js';
import { SectorIdentifierVerifier } from './sector-identifier.verifier.js';
import { minimumAcrFrom, openIdSettingsFrom, sectorOfClient, SubjectType, type OpenIdClientSettings } from './openid-client-settings.js';
import { assertRedirectUrisAcceptable, descriptiveUriProblem } from './redirect-uri.policy.js';

const DEFAULT_GRANT_TYPES: GrantType[] = [GrantType.AuthorizationCode, GrantType.RefreshToken];
const SUPPORTED_GRANT_TYPES = new Set<string>(Object.values(GrantType));
const TOKEN_TYPES = new Set<string>(Object.values(TokenType));

/** Who made a change and from where, as the audit trail records it. */
type AuditOrigin = Pick<ClientEditor, 'actor' | 'ip'>;

/** Registration fields (RFC 7591 names) with their old and new value. */
export type FieldChanges = Record<string, { old: unknown; new: unknown }>;

/**
 * The registration fields whose value differs, with both values (for the audit trail; a view holds
 * no secret). Fields of either view: an optional field the update leaves out (a backchannel_logout_uri
 * removed) is a change too, not an update to skip.
 */
function changedFields(before: ClientView, after: ClientView): FieldChanges {
  const changes: FieldChanges = {};
  for (const field of new Set([...Object.keys(before), ...Object.keys(after)]) as Set<keyof ClientView>) {
    if (JSON.stringify(before[field]) !== JSON.stringify(after[field])) changes[field] = { old: before[field], new: after[field] };
  }
  return changes;
}

@Injectable()
export class ClientsService {
  constructor(
    private readonly store: ClientStore,
    private readonly scopes: ScopeCatalog,
    private readonly audit: AuditService,
    private readonly transactions: Transactions,
    private readonly sectors: SectorIdentifierVerifier,
    private readonly profiles: SecurityProfiles,
    private readonly changes: ClientChanges,
    private readonly clock: Clock,
  ) {}

  /**
   * Registers a client. The secret (confidential clients) is returned here once and stored only as
   * a hash. Issue 48: an owner-only scope is given only by an owner editor (the CLI, admin:owner).
   * `clientId` and `secret`, as draft() takes them: the admin console's own client, whose id is
   * known and whose secret every instance derives (admin-console/console-client.ts).
   */
  async create(input: NewClient, editor: ClientEditor = CLI_ADMINISTRATOR, options: { registrationToken?: string; clientId?: string; secret?: string } = {}): Promise<{ client: Client; secret?: string }> {
    const { client, secret } = await this.draft(input, options);
    assertOwnerScopesRespected(null, splitScope(client.scope), editor);
    const saved = await this.change([client.id], (manager) => this.saveRegistered(client, editor, manager));
    return { client: saved, secret };
  }

  /** A page of clients matching `filter`, by name then id (the admin API's list). */
  search(filter: ClientFilter, page: KeysetPage): Promise<Client[]> {
    return this.store.search(filter, page);
  }

  /**
   * A new client as create() registers it, every rule checked but nothing stored. `clientId` and
   * `secret` are an administrator's choice (clients:apply: the id its applications are configured
   * with, the secret from where the document names it); otherwise both are generated.
   */
  async draft(input: NewClient, options: { registrationToken?: string; clientId?: string; secret?: string } = {}): Promise<{ client: Client; secret?: string }> {
    const name = input.name.trim();
    const { grantTypes, responseTypes, scope, openIdSettings, minimumAcr, method, keys } = this.checked(input);
    await this.verifySector(openIdSettings, input.redirectUris);
    // A private_key_jwt client proves itself with its keys: it gets no secret to leak.
    const secretless = method === ClientAuthMethod.None || method === ClientAuthMethod.PrivateKeyJwt;
    if (secretless && options.secret !== undefined) throw new DomainError('invalid_client_metadata', `A client authenticating with "${method}" has no secret.`);
    const secret = secretless ? undefined : (options.secret ?? generateSecret(SECRET_PREFIX.clientSecret));
    const client = Object.assign(new Client(), {
      id: options.clientId ?? newClientId(),
      name,
      secretHash: secret ? hashSecret(secret) : null,
      redirectUris: [...new Set(input.redirectUris)],
      scope: formatScope(scope),
      grantTypes: [...new Set(grantTypes)],
      responseTypes,
      tokenEndpointAuthMethod: method,
      registrationTokenHash: options.registrationToken ? hashSecret(options.registrationToken) : null,
      accessTokenType: input.accessTokenType ?? TokenType.Bearer,
      ...descriptiveColumns(input.descriptive),
      ...keys,
      openIdSettings,
      minimumAcr,
    });
    return { client, secret };
  }

  /**
   * RFC 7592 §2.2: replaces a client's metadata. Whether it has a secret cannot change, and the
   * secret itself is untouched. Every editor follows the rules of a registration; a client editing
   * itself may moreover only narrow what it has (client-change-policy.ts). Nothing is written
   * unless every rule holds; the change and its audit event, which lists each changed field with
   * its old and new value, are stored together.
   */
  async update(client: Client, input: NewClient, editor: ClientEditor): Promise<Client> {
    const { next, changes } = await this.revise(client, input, editor);
    if (Object.keys(changes).length === 0) return client;
    return this.change([client.id], (manager) => this.saveUpdated(next, changes, editor, manager));
  }

  /** The client as update() would leave it, with each changed field's old and new value; every rule checked, nothing stored. */
  async revise(client: Client, input: NewClient, editor: ClientEditor): Promise<{ next: Client; changes: FieldChanges }> {
    if ((input.isPublic ?? false) !== client.isPublic) {
      throw new DomainError('invalid_client_metadata', 'token_endpoint_auth_method cannot change between "none" and a secret-based method.');
    }
    const { grantTypes, responseTypes, scope, openIdSettings, minimumAcr, method, keys } = this.checked(input);
    assertOwnerScopesRespected(splitScope(client.scope), scope, editor);
    // The credential kind is fixed at registration: a secret is never issued by an update, nor a key set turned into one.
    if ((method === ClientAuthMethod.PrivateKeyJwt) !== (client.tokenEndpointAuthMethod === ClientAuthMethod.PrivateKeyJwt)) {
      throw new DomainError('invalid_client_metadata', 'token_endpoint_auth_method cannot change between "private_key_jwt" and another method; register a new client.');
    }
    await this.verifySector(openIdSettings, input.redirectUris);
    const next = Object.assign(new Client(), client, {
      name: input.name.trim(),
      redirectUris: [...new Set(input.redirectUris)],
      scope: formatScope(scope),
      grantTypes: [...new Set(grantTypes)],
      responseTypes,
      tokenEndpointAuthMethod: method,
      accessTokenType: input.accessTokenType ?? TokenType.Bearer,
      ...descriptiveColumns(input.descriptive),
      ...keys,
      openIdSettings,
      minimumAcr,
    });
    // Core §8.1: a pairwise client's subs are derived from its sector; moving it would give every person a new sub.
    if (client.openId.subjectType === SubjectType.Pairwise && next.openId.subjectType === SubjectType.Pairwise && sectorOfClient(client.redirectUris, client.openId) !== sectorOfClient(next.redirectUris, next.openId)) {
      throw new DomainError('invalid_client_metadata', 'A pairwise client cannot move to another sector (its redirect URIs\' host or its sector_identifier_uri\'s): the subject identifiers it knows people by would change.');
    }
    if (editor.kind === 'self') {
      // Post-logout redirect URIs send the browser somewhere, like redirect URIs: the same rule.
      const rights = (of: Client, scopes: readonly string[]) => ({
        scope: scopes,
        grantTypes: of.grantTypes,
        responseTypes: responseTypesOfClient(of),
        redirectUris: [...of.redirectUris, ...of.openId.postLogoutRedirectUris],
        accessTokenType: of.accessTokenType,
        subjectType: of.openId.subjectType,
        sectorIdentifierUri: of.openId.sectorIdentifierUri,
        backchannelLogoutUri: of.openId.backchannelLogoutUri,
        requirePushedAuthorizationRequests: of.openId.requirePushedAuthorizationRequests ?? false,
        dpopBoundAccessTokens: of.openId.dpopBoundAccessTokens ?? false,
        securityProfile: of.openId.securityProfile ?? 'default',
        minimumAcr: of.minimumAcr,
        keys: JSON.stringify([of.jwks, of.jwksUri, of.tokenEndpointAuthSigningAlg]),
      });
      assertNotWidenedBySelf(rights(client, parseScope(client.scope) ?? []), rights(next, scope));
    }
    return { next, changes: changedFields(this.toView(client), this.toView(next)) };
  }

  /** The client a registration access token manages (one indexed lookup by hash), or null. */
  findByRegistrationToken(token: string): Promise<Client | null> {
    return this.store.findByRegistrationTokenHash(hashSecret(token));
  }

  findById(clientId: string): Promise<Client | null> {
    // PostgreSQL text cannot hold NUL: such an id names no client (and must not become a 500).
    if (clientId.includes('\0')) return Promise.resolve(null);
    return this.store.findById(clientId);
  }

  /** Whether the client is stored now (never from a cache): for a request that met its deletion half-way (TokenEndpointService). */
  existsNow(clientId: string): Promise<boolean> {
    return this.store.existsNow(clientId);
  }

  list(): Promise<Client[]> {
    return this.store.list();
  }

  /** Checks a presented secret against the stored hash, in constant time. Public clients have none to match. */
  secretMatches(client: Client, secret: string): boolean {
    return client.secretHash !== null && secretMatchesHash(secret, client.secretHash);
  }

  /**
   * Issues a new secret; the old one stops working at once. Issue 48: on a client holding an
   * owner-only scope, an owner's act only. `chosen`: the secret the admin console derives, set on its own client.
   */
  async rotateSecret(clientId: string, editor: ClientEditor = CLI_ADMINISTRATOR, chosen?: string): Promise<{ client: Client; secret: string }> {
    const client = await this.require(clientId);
    if (client.isPublic) throw new DomainError('public_client', `Client ${clientId} is public and has no secret.`);
    // Its keys are its credentials (client-keys.ts): a secret would be a second way in, never asked for.
    if (client.tokenEndpointAuthMethod === ClientAuthMethod.PrivateKeyJwt) throw new DomainError('public_client', `Client ${clientId} authenticates with its keys (private_key_jwt) and has no secret.`);
    assertOwnerMayManage(client.scope, editor);
    const secret = chosen ?? generateSecret(SECRET_PREFIX.clientSecret);
    client.secretHash = hashSecret(secret);
    const saved = await this.change([clientId], async (manager) => {
      const stored = await this.store.save(client, manager);
      await this.audit.record({ actor: { actor: editor.actor, ip: editor.ip }, action: 'client.secret_rotated', subject: `client:${clientId}` }, manager);
      return stored;
    });
    return { client: saved, secret };
  }

  /**
   * clients:sign-in (issue 45): how the client's people may sign in; null lifts the restriction.
   * The identity providers named are checked by the caller (SignInMethods). Audited as an update.
   * Issue 48: a rule narrows or widens who signs in, so on a client holding an owner-only scope it
   * is an owner's change (assertOwnerMayManage), as any other change of such a client.
   */
  async setSignInRule(clientId: string, rule: ClientSignInRule | null, editor: ClientEditor = CLI_ADMINISTRATOR): Promise<Client> {
    const client = await this.require(clientId);
    assertOwnerMayManage(client.scope, editor);
    const next = Object.assign(new Client(), client, { signInRule: rule });
    const changes = changedFields(this.toView(client), this.toView(next));
    return this.change([clientId], (manager) => this.saveUpdated(next, changes, editor, manager));
  }

  /**
   * clients:groups (issue 46): the `groups` claim the client receives, and the groups whose members
   * alone may sign in to it (null: anyone). Group ids are checked by the caller (ClientGroupSettings).
   * Audited as an update; the cache is dropped after the commit, as for every client change.
   * Issue 48: requiring a group narrows who signs in and removing one widens it, so on a client
   * holding an owner-only scope it is an owner's change (assertOwnerMayManage).
   */
  async setGroupSettings(clientId: string, settings: { groupsClaim?: GroupsClaimSetting; requiredGroups?: string[] | null }, editor: ClientEditor = CLI_ADMINISTRATOR): Promise<Client> {
    const client = await this.require(clientId);
    assertOwnerMayManage(client.scope, editor);
    const next = Object.assign(new Client(), client, {
      ...(settings.groupsClaim !== undefined ? { groupsClaim: settings.groupsClaim } : {}),
      ...(settings.requiredGroups !== undefined ? { requiredGroups: settings.requiredGroups === null || settings.requiredGroups.length === 0 ? null : [...new Set(settings.requiredGroups)] } : {}),
    });
    const changes = changedFields(this.toView(client), this.toView(next));
    return this.change([clientId], (manager) => this.saveUpdated(next, changes, editor, manager));
  }

  /** Deletes the client with its codes, tokens and consents (ON DELETE CASCADE). Issue 48: on a client holding an owner-only scope, an owner's act only. */
  async delete(clientId: string, editor: ClientEditor = CLI_ADMINISTRATOR): Promise<void> {
    const client = await this.require(clientId);
    assertOwnerMayManage(client.scope, editor);
    await this.change([clientId], (manager) => this.remove(client, editor, manager));
  }

  /**
   * Registers, changes and deletes clients together, in one transaction: all of them or none
   * (clients:apply, PUT /client-declarations). Each was drafted or revised first, and held to the
   * editor's rights, so every rule has been checked. A changed secret is recorded as a rotation,
   * never with its value. `by`: who applies it and from where, for the audit trail.
   */
  async applyAll(plan: { create: Client[]; update: { next: Client; changes: FieldChanges; secretChanged: boolean }[]; remove: Client[] }, by: AuditOrigin = CLI_ADMINISTRATOR): Promise<void> {
    const ids = [...plan.create, ...plan.update.map((u) => u.next), ...plan.remove].map((c) => c.id);
    if (ids.length === 0) return;
    const origin = { actor: by.actor, ip: by.ip };
    await this.change(ids, async (manager) => {
      for (const client of plan.create) await this.saveRegistered(client, origin, manager);
      for (const { next, changes, secretChanged } of plan.update) {
        await this.saveUpdated(next, changes, origin, manager);
        if (secretChanged) await this.audit.record({ actor: origin, action: 'client.secret_rotated', subject: `client:${next.id}` }, manager);
      }
      for (const client of plan.remove) await this.remove(client, origin, manager);
    });
  }

  private async saveRegistered(client: Client, { actor, ip }: AuditOrigin, manager: EntityManager): Promise<Client> {
    const stored = await this.store.save(client, manager);
    await this.audit.record({ actor: { actor, ip }, action: 'client.registered', subject: `client:${stored.id}`, details: { client_name: stored.name, grant_types: stored.grantTypes, scope: stored.scope } }, manager);
    return stored;
  }

  /** The change and its audit event, which lists each changed field with its old and new value, are stored together. */
  private async saveUpdated(next: Client, changes: FieldChanges, { actor, ip }: AuditOrigin, manager: EntityManager): Promise<Client> {
    const saved = await this.store.save(next, manager);
    if (Object.keys(changes).length > 0) await this.audit.record({ actor: { actor, ip }, action: 'client.updated', subject: `client:${next.id}`, details: { changes } }, manager);
    return saved;
  }

  private async remove(client: Client, { actor, ip }: AuditOrigin, manager: EntityManager): Promise<void> {
    await this.store.delete(client.id, this.clock.now(), manager);
    await this.audit.record({ actor: { actor, ip }, action: 'client.deleted', subject: `client:${client.id}`, details: { client_name: client.name } }, manager);
  }

  /** Runs a change of clients atomically, then tells this instance's listeners (ClientChanges) that it committed. */
  private async change<T>(clientIds: readonly string[], work: (manager: EntityManager) => Promise<T>): Promise<T> {
    const outcome = await this.transactions.run(work);
    for (const clientId of clientIds) this.changes.committed(clientId);
    return outcome;
  }

  toView(client: Client, secret?: string): ClientView {
    return clientView(client, secret);
  }

  /** The rules every registration follows, from the CLI or over HTTP (RFC 7591 §2). */
  private checked(input: NewClient): { grantTypes: GrantType[]; responseTypes: ResponseType[] | null; scope: string[]; openIdSettings: OpenIdClientSettings | null; minimumAcr: Acr | null; method: ClientAuthMethod; keys: ClientKeys } {
    const name = input.name.trim();
    if (name.length === 0 || name.length > 200) throw new DomainError('invalid_client_metadata', 'Client name must be 1 to 200 characters.');
    const grantTypes = input.grantTypes ?? DEFAULT_GRANT_TYPES;
    const unknown = grantTypes.filter((g) => !SUPPORTED_GRANT_TYPES.has(g));
    if (unknown.length > 0) throw new DomainError('invalid_client_metadata', `Unsupported grant type(s): ${unknown.join(', ')}.`);
    // Kept only when registered: otherwise they follow the grant types (responseTypesOfClient).
    const responseTypes = input.responseTypes === undefined ? null : checkedResponseTypes(grantTypes, input.responseTypes);
    if (input.accessTokenType !== undefined && !TOKEN_TYPES.has(input.accessTokenType)) {
      throw new DomainError('invalid_client_metadata', `Unsupported access_token_type "${String(input.accessTokenType)}"; use ${[...TOKEN_TYPES].join(' or ')}.`);
    }
    // Redirect URIs belong to the authorization code grant; a client_credentials-only client has none.
    if (grantTypes.includes(GrantType.AuthorizationCode) && input.redirectUris.length === 0) {
      throw new DomainError('invalid_redirect_uri', 'At least one redirect URI is required for the authorization_code grant.');
    }
    // RFC 6749 §4.2: the implicit grant delivers its token to a registered redirect URI too.
    if (grantTypes.includes(GrantType.Implicit) && input.redirectUris.length === 0) {
      throw new DomainError('invalid_redirect_uri', 'At least one redirect URI is required for the implicit grant.');
    }
    // RFC 6749 §4.3.2 has the client authenticate; a public client proves nothing, so anyone could
    // try passwords through it (RFC 9700 §2.4).
    if (input.isPublic && grantTypes.includes(GrantType.Password)) {
      throw new DomainError('invalid_client_metadata', 'A public client cannot use the password grant.');
    }
    // RFC 8693 §2.1: the exchanging client authenticates; a public one proves nothing about who acts.
    if (input.isPublic && grantTypes.includes(GrantType.TokenExchange)) {
      throw new DomainError('invalid_client_metadata', 'A public client cannot use the token exchange grant.');
    }
    // RFC 6749 §4.4: only confidential clients may use client_credentials.
    if (input.isPublic && grantTypes.includes(GrantType.ClientCredentials)) {
      throw new DomainError('invalid_client_metadata', 'A public client cannot use the client_credentials grant.');
    }
    assertRedirectUrisAcceptable(input.redirectUris);
    for (const field of DESCRIPTIVE_FIELDS) {
      const value = input.descriptive?.[field];
      const problem = value === undefined ? undefined : descriptiveUriProblem(value);
      if (problem) throw new DomainError('invalid_client_metadata', `${field} ${JSON.stringify(value)} ${problem}.`);
    }
    const scope = parseScope(input.scope ?? '');
    if (scope === undefined) throw new DomainError('invalid_client_metadata', 'Scope must be space-separated tokens of printable ASCII without quotes or backslashes.');
    const unknownScopes = scope.filter((s) => !this.scopes.isKnown(s));
    if (unknownScopes.length > 0) {
      throw new DomainError('invalid_client_metadata', `Unknown scope(s): ${unknownScopes.join(', ')}. Known scopes: ${this.scopes.all().join(', ')} (data scopes come from the collections file).`);
    }
    const openIdSettings = input.openId === undefined ? null : openIdSettingsFrom(input.openId, input.redirectUris);
    const minimumAcr = minimumAcrFrom(input.openId);
    // A MAC token is proved with its own key; it cannot also be bound to a DPoP key (RFC 9449 §5).
    if (openIdSettings?.dpopBoundAccessTokens && input.accessTokenType === TokenType.Mac) {
      throw new DomainError('invalid_client_metadata', 'dpop_bound_access_tokens cannot be combined with access_token_type "mac".');
    }
    const method = input.isPublic ? ClientAuthMethod.None : (input.tokenEndpointAuthMethod ?? ClientAuthMethod.ClientSecretBasic);
    if (method === ClientAuthMethod.None && !input.isPublic) throw new DomainError('invalid_client_metadata', 'token_endpoint_auth_method "none" is for public clients.');
    const keys = clientKeysFrom(input.keys ?? {}, method);
    // FAPI 2.0: a client that does not meet the profile cannot be registered under it.
    if (openIdSettings?.securityProfile === 'fapi2' || this.profiles.requiredEverywhere) {
      const problems = this.profiles.problems({
        isPublic: input.isPublic ?? false,
        tokenEndpointAuthMethod: method,
        grantTypes,
        accessTokenType: input.accessTokenType ?? TokenType.Bearer,
        requirePushedAuthorizationRequests: openIdSettings?.requirePushedAuthorizationRequests ?? false,
        dpopBoundAccessTokens: openIdSettings?.dpopBoundAccessTokens ?? false,
        idTokenSignedResponseAlg: openIdSettings?.idTokenSignedResponseAlg ?? DEFAULT_SIGNING_ALGORITHM,
        tokenEndpointAuthSigningAlg: keys.tokenEndpointAuthSigningAlg,
      });
      const why = this.profiles.requiredEverywhere ? 'this server holds every client to the FAPI 2.0 Security Profile' : 'security_profile is "fapi2"';
      if (problems.length > 0) throw new DomainError('invalid_client_metadata', `The registration does not meet the FAPI 2.0 Security Profile (${why}): ${problems.join('; ')}.`);
    }
    return { grantTypes, responseTypes, scope, openIdSettings, minimumAcr, method, keys };
  }

  /** Core §8.1: a sector_identifier_uri must list every redirect URI; read before anything is written. */
  private async verifySector(settings: OpenIdClientSettings | null, redirectUris: readonly string[]): Promise<void> {
    if (settings?.sectorIdentifierUri) await this.sectors.verify(settings.sectorIdentifierUri, redirectUris);
  }

  private async require(clientId: string): Promise<Client> {
    const client = await this.findById(clientId);
    if (!client) throw new DomainError('client_not_found', `No client with id "${clientId}".`);
    return client;
  }
}
