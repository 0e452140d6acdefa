import { DomainError } from '../../common/domain-error.js';

/** What POST /resource-servers takes: resources:register's flags under wire names. */
export interface NewResourceServer {
  uri: string;
  name?: string;
  accessTokenFormat?: string;
  introspector?: string;
}

const FIELDS = ['uri', 'name', 'access_token_format', 'introspector'];

/**
 * A resource server's registration from a JSON body: `uri` (RFC 8707 §2), and optionally `name`,
 * `access_token_format` (opaque or jwt) and `introspector` (a client id). Types and unknown
 * fields are refused here; the values are checked by ResourceServersService, as for the CLI.
 */
export function newResourceServerFrom(body: Record<string, unknown>): NewResourceServer {
  const unknown = Object.keys(body).filter((field) => !FIELDS.includes(field));
  if (unknown.length > 0) throw invalid(`Unknown field ${JSON.stringify(unknown[0].slice(0, 64))}; the fields are ${FIELDS.join(', ')}`);
  const text = (field: string, required = false): string | undefined => {
    const value = body[field];
    if (value === undefined && !required) return undefined;
    if (typeof value !== 'string' || value.includes('\0')) throw invalid(`${field} must be ${required ? 'given as ' : ''}a string`);
    return value;
  };
  return { uri: text('uri', true)!, name: text('name'), accessTokenFormat: text('access_token_format'), introspector: text('introspector') };
}

function invalid(message: string): DomainError {
  return new DomainError('invalid_resource', message);
}
