/** The rules of the domain a caller's input can break, each a stable snake_case code. */
export type DomainErrorCode =
  | 'invalid_client_metadata'
  | 'invalid_redirect_uri'
  | 'client_not_found'
  | 'public_client'
  | 'invalid_username'
  | 'invalid_password'
  | 'invalid_profile'
  | 'username_taken'
  | 'user_not_found'
  | 'invalid_resource'
  | 'resource_server_not_found'
  | 'invalid_identity_provider'
  | 'identity_provider_not_found'
  | 'identity_provider_exists'
  | 'upstream_link_taken'
  | 'upstream_link_not_found'
  // Groups (issue 46).
  | 'invalid_group'
  | 'group_not_found'
  | 'group_name_taken'
  | 'group_cycle'
  | 'member_not_found'
  // Administrator roles (issue 48).
  | 'invalid_admin_role'
  | 'last_owner'
  | 'admin_client_protected'
  // The admin API's people (issue 48).
  | 'administrator_protected'
  | 'self_protected'
  | 'passkey_not_found'
  | 'session_not_found'
  | 'grant_not_found'
  // The audit log's filters and signing-key rotation (issue 48).
  | 'invalid_audit_filter'
  | 'rotation_conflict';

/**
 * A rule of the domain was broken by the caller's input (a taken username, a malformed redirect
 * URI). The CLI prints it to stderr; over HTTP, src/http/domain-error-response.ts maps each code.
 */
export class DomainError extends Error {
  constructor(
    readonly code: DomainErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'DomainError';
  }
}
