import type { DomainError } from '../common/domain-error.js';
import type { JsonError } from './json-error.js';

/**
 * A domain rule broken over HTTP. Registration's metadata errors keep their own codes (RFC 7591
 * §3.2.2); the others take the status's code. Exhaustive: a new code does not compile until it is mapped here.
 */
export function domainErrorResponse(error: DomainError): JsonError {
  switch (error.code) {
    case 'invalid_client_metadata':
    case 'invalid_redirect_uri':
      return { status: 400, error: error.code, description: error.message };
    case 'public_client':
    case 'invalid_username':
    case 'invalid_password':
    case 'invalid_profile':
    case 'invalid_resource':
    case 'invalid_identity_provider':
    case 'invalid_group':
    case 'group_cycle':
    case 'invalid_admin_role':
    case 'invalid_audit_filter':
      return { status: 400, error: 'invalid_request', description: error.message };
    case 'client_not_found':
    case 'user_not_found':
    case 'resource_server_not_found':
    case 'identity_provider_not_found':
    case 'group_not_found':
    case 'member_not_found':
    case 'passkey_not_found':
    case 'session_not_found':
    case 'grant_not_found':
    case 'upstream_link_not_found':
      return { status: 404, error: 'not_found', description: error.message };
    case 'username_taken':
    case 'identity_provider_exists':
    case 'upstream_link_taken':
    case 'group_name_taken':
    case 'last_owner':
    case 'rotation_conflict':
      return { status: 409, error: 'conflict', description: error.message };
    case 'admin_client_protected':
      return { status: 403, error: 'admin_client_protected', description: error.message };
    case 'administrator_protected':
    case 'self_protected':
      return { status: 403, error: 'forbidden', description: error.message };
    default:
      return unreachable(error.code);
  }
}

function unreachable(code: never): never {
  throw new Error(`Unmapped domain error code ${String(code)}`);
}
