import { acrAtLeast, type Acr } from '../common/authentication-context.js';
import { DomainError } from '../common/domain-error.js';
import { ADMINISTRATOR_GRANT_TYPES, type GrantType, type TokenType } from '../common/oauth.constants.js';
import { isAdminScope } from '../scopes/admin-scopes.js';
import { splitScope } from '../common/scope.js';
import { CLIENT_SCOPES, OWNER_ONLY_CLIENT_SCOPES } from '../scopes/scope-catalog.js';

/**
 * Who changes a client's registration, and from where (the caller's address, for the audit trail):
 * - an administrator: the CLI (`cli`), an admin API caller (`user:<id>`, `client:<id>`), or a
 *   client holding a `clients:register` token (`client:<id>`) acting on another client; bound by
 *   the rules of every registration only;
 * - the client itself, with its registration access token (RFC 7592 §2.2), which may narrow what it
 *   has but never widen it.
 */
export type ClientEditor =
  /** `owner`: may give, change or take away owner-only scopes (the CLI, or an admin API caller holding admin:owner). */
  | { readonly kind: 'administrator'; readonly actor: string; readonly owner?: boolean; readonly ip?: string }
  | { readonly kind: 'self'; readonly actor: string; readonly ip?: string };

export const CLI_ADMINISTRATOR: ClientEditor = { kind: 'administrator', actor: 'cli', owner: true };

/**
 * Scopes only an owner gives (issue 48): the admin scopes, a standing credential to the admin API,
 * and `scim` (RFC 7644), with which a directory creates, changes and deactivates people and sets
 * their groups, and group membership opens applications (issue 46): an owner's power too.
 */
export function isOwnerOnlyScope(scope: string): boolean {
  return isAdminScope(scope) || OWNER_ONLY_CLIENT_SCOPES.includes(scope);
}

/** Whether the client holds an owner-only scope (isOwnerOnlyScope). */
export function holdsOwnerOnlyScope(scope: string): boolean {
  return splitScope(scope).some(isOwnerOnlyScope);
}

/**
 * Issue 48: a client holding an owner-only scope is, through its secret or its redirect URIs, a way
 * into the admin API (or into every person's account, for `scim`). Only an owner gives one (`next`
 * adds one), and only an owner changes, rotates or deletes such a client: a client administrator
 * (admin:clients, or a `clients:register` token) who could move the console's redirect URI would
 * receive an owner's codes. The client itself may still narrow (drop the scope) under
 * assertNotWidenedBySelf. `current` is null for a new client; rotation and deletion pass the
 * registered scope as both (they add nothing, and may only be an owner's on such a client).
 */
export function assertOwnerScopesRespected(current: readonly string[] | null, next: readonly string[], editor: ClientEditor): void {
  if (editor.kind === 'self' || editor.owner === true) return;
  if (current !== null && current.some(isOwnerOnlyScope)) {
    const held = current.filter(isOwnerOnlyScope).join(', ');
    throw new DomainError('admin_client_protected', `This client holds ${held}; only an owner (admin:owner, or the CLI) may change, rotate or delete it`);
  }
  const added = next.filter((scope) => isOwnerOnlyScope(scope) && !(current ?? []).includes(scope));
  if (added.length > 0) throw new DomainError('invalid_client_metadata', `${added.join(' and ')} can be granted only by an owner (admin:owner, or the CLI)`);
}

/** Rotating a client's secret, deleting it or withdrawing its grants: an owner's act on a client holding an owner-only scope (assertOwnerScopesRespected). */
export function assertOwnerMayManage(scope: string, editor: ClientEditor): void {
  assertOwnerScopesRespected(splitScope(scope), splitScope(scope), editor);
}

/** What a registration grants, as the rules below compare it. */
export interface ClientRights {
  scope: readonly string[];
  grantTypes: readonly GrantType[];
  /** RFC 7591 §2: a response type added (id_token beside token, say) is an administrator's decision like a grant. */
  responseTypes?: readonly string[];
  redirectUris: readonly string[];
  accessTokenType: TokenType;
  /**
   * OpenID Connect Core §8: public or pairwise subjects, and the sector they are derived from.
   * Going from pairwise to public, or to another sector, would hand the client identifiers it
   * could match across sectors: an administrator's decision too.
   */
  subjectType?: string;
  sectorIdentifierUri?: string | null;
  /**
   * Back-Channel Logout §2.2: where logout tokens (the person's sub and session id) are POSTed.
   * Like a redirect URI it names a place the server sends something about a person, so setting,
   * moving or removing it is an administrator's change (issue 30): with a stolen registration
   * access token, moving it would send every logout of the client's users to the thief, and
   * removing it would silently stop the client's sessions ending with the person's.
   */
  backchannelLogoutUri?: string | null;
  /** RFC 9126 §6: its authorization requests must be pushed. Dropping it would weaken what protects them. */
  requirePushedAuthorizationRequests?: boolean;
  /** RFC 9449 §5.2: its access tokens must be DPoP-bound. Dropping it would let a stolen secret get bearer tokens again. */
  dpopBoundAccessTokens?: boolean;
  /** FAPI 2.0: leaving the profile would drop every protection it brings at once. */
  securityProfile?: string;
  /** The weakest sign-in level its requests get (minimum_acr): lowering it would let a stolen registration token undo an administrator's --require-mfa. */
  minimumAcr?: Acr | null;
  /**
   * A private_key_jwt client's credentials: its jwks, jwks_uri and pinned algorithm, as one JSON
   * value. Whoever replaces them can sign as the client, so it is an administrator's change, as
   * a secret is never chosen by the client either; a jwks_uri client rotates keys at its URL.
   */
  keys?: string;
}

/**
 * A client managing itself may change its descriptive metadata and drop scopes, grant types and
 * redirect URIs, but never add one it was not registered with, nor change its access token type
 * (RFC 7592 §2.2 lets the server refuse values; RFC 7591 §5 and RFC 9700 §4.15: a client's rights
 * are an administrator's decision). Response types follow the grant types (RFC 7591 §2.1), so a
 * new response type is refused as the grant it needs, or as itself (id_token beside token). Redirect URIs compare as exact strings,
 * as they are matched at /authorize (RFC 9700 §2.1).
 * Throws invalid_client_metadata naming the first field that would widen.
 */
export function assertNotWidenedBySelf(current: ClientRights, next: ClientRights): void {
  const addedScopes = added(current.scope, next.scope);
  if (addedScopes.length > 0) {
    const privileged = addedScopes.filter((scope) => Object.hasOwn(CLIENT_SCOPES, scope));
    const why = privileged.length > 0 ? `${privileged.join(' and ')} can be granted only by an administrator` : 'only an administrator can widen a client';
    throw widening('scope', `adds ${addedScopes.join(' ')}; ${why}`);
  }
  const addedGrants = added(current.grantTypes, next.grantTypes);
  if (addedGrants.length > 0) {
    // Legacy grants and token exchange (RFC 8693: tokens for other services) are named, as they are an administrator's decision even at registration.
    const privileged = addedGrants.filter((grant) => ADMINISTRATOR_GRANT_TYPES.includes(grant));
    const why = privileged.length > 0 ? `the ${privileged.join(' and ')} grant can be allowed only by an administrator` : 'only an administrator can widen a client';
    throw widening('grant_types', `adds ${addedGrants.join(', ')}; ${why}`);
  }
  const addedResponseTypes = added(current.responseTypes ?? [], next.responseTypes ?? []);
  if (addedResponseTypes.length > 0) throw widening('response_types', `adds ${addedResponseTypes.join(', ')}; only an administrator can widen a client`);
  const addedUris = added(current.redirectUris, next.redirectUris);
  if (addedUris.length > 0) throw widening('redirect_uris', `adds ${addedUris.join(', ')}; only an administrator can register new redirect URIs`);
  if (next.accessTokenType !== current.accessTokenType) {
    throw widening('access_token_type', `is "${current.accessTokenType}" and only an administrator can change it`);
  }
  if (next.subjectType !== current.subjectType) {
    throw widening('subject_type', `is "${String(current.subjectType)}" and only an administrator can change it`);
  }
  if ((next.sectorIdentifierUri ?? null) !== (current.sectorIdentifierUri ?? null)) {
    throw widening('sector_identifier_uri', 'names the sector pairwise subjects come from, and only an administrator can change it');
  }
  // Turning the requirement on narrows; turning it off would let a stolen registration token open the front channel again.
  if (current.requirePushedAuthorizationRequests === true && next.requirePushedAuthorizationRequests !== true) {
    throw widening('require_pushed_authorization_requests', 'is true and only an administrator can turn it off');
  }
  if (current.dpopBoundAccessTokens === true && next.dpopBoundAccessTokens !== true) {
    throw widening('dpop_bound_access_tokens', 'is true and only an administrator can turn it off');
  }
  if ((current.keys ?? null) !== (next.keys ?? null)) {
    throw widening('jwks', '(with jwks_uri and token_endpoint_auth_signing_alg) are the client\'s credentials and only an administrator can replace them; rotate keys at the jwks_uri instead');
  }
  if ((next.backchannelLogoutUri ?? null) !== (current.backchannelLogoutUri ?? null)) {
    const now = current.backchannelLogoutUri ? `is ${JSON.stringify(current.backchannelLogoutUri)}` : 'is not registered';
    throw widening('backchannel_logout_uri', `${now}; only an administrator can set, move or remove where logout tokens are sent`);
  }
  if (current.securityProfile === 'fapi2' && next.securityProfile !== 'fapi2') {
    throw widening('security_profile', 'is "fapi2" and only an administrator can leave it');
  }
  // Raising the floor narrows who gets through; lowering or removing it is an administrator's decision.
  if (current.minimumAcr && !(next.minimumAcr && acrAtLeast(next.minimumAcr, current.minimumAcr))) {
    throw widening('minimum_acr', `is "${current.minimumAcr}" and only an administrator can lower or remove it`);
  }
}

function added<T>(current: readonly T[], next: readonly T[]): T[] {
  return next.filter((value) => !current.includes(value));
}

function widening(field: string, problem: string): DomainError {
  return new DomainError('invalid_client_metadata', `${field} ${problem}. A client managing itself may only narrow what it was registered with.`);
}
