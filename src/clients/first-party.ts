import { CONSOLE_CALLBACK_PATH, CONSOLE_CLIENT_ID } from './console-client-id.js';

/**
 * Issue 48: whether an authorization request comes from the server itself (its admin console), for
 * which the authorization endpoint takes the person's consent as given, as Keycloak's, Zitadel's
 * and Authentik's own consoles do: the server is no third party to itself, and a consent page
 * there only trains administrators to click Allow. What the person gets is unchanged: the admin
 * scopes their roles allow and no more (AdminRolesService.withinRoles when the code is issued,
 * AdminAccess on every call).
 *
 * Decided from nothing a registration carries (no metadata field, name or flag that /register,
 * the admin API or clients:apply could set): the console's client id, which the server registers
 * itself and only an owner may change (it holds owner-only scopes: client-change-policy.ts), AND
 * the response going to the console's own callback under the issuer. The second holds even if
 * someone registered that id while the console had not yet (clients:apply chooses ids) or an
 * owner pointed its redirect URIs elsewhere: a response sent anywhere but this server's own page
 * is asked for as any client's is. Compared exactly (RFC 6749 §3.1.2.3, no loopback port leeway):
 * the issuer is the console's origin, port included.
 */
export function isFirstPartyRequest(request: { clientId: string; redirectUri: string }, issuer: string): boolean {
  return request.clientId === CONSOLE_CLIENT_ID && request.redirectUri === issuer + CONSOLE_CALLBACK_PATH;
}
