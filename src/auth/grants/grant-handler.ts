import type { Client } from '../../clients/client.entity.js';
import type { GrantType } from '../../common/oauth.constants.js';
import type { TokenRequestDto } from '../token/token-request.dto.js';
import type { TokenResponse } from '../token/token-response.js';

/** What a grant knows of the request besides its parameters. */
export interface GrantContext {
  /** The authenticated client, registered for this grant. */
  readonly client: Client;
  /**
   * The caller's address (as TRUST_PROXY reads it), for the password grant's sign-in throttle.
   * A function: working it out costs a proxy-addr walk, which the other grants never need.
   */
  readonly clientAddress: () => string;
  /** The key thumbprint of the request's valid DPoP proof (RFC 9449 §5), when it sent one. */
  readonly dpopJkt?: string;
}

/**
 * One grant type of the token endpoint (RFC 6749 §4). Each grant declares the parameters it reads
 * (`P`, as node-oidc-provider declares each grant's parameters): `parameters` takes them from the
 * validated form, refusing a missing required one with invalid_request (§5.2), and `handle` works
 * on those alone. The endpoint has already authenticated the client and checked that it is
 * registered for this grant before either runs.
 */
export interface GrantHandler<P = unknown> {
  readonly grantType: GrantType;
  parameters(form: TokenRequestDto): P;
  handle(parameters: P, context: GrantContext): Promise<TokenResponse>;
}

/** Injection token for the list of grant handlers. */
export const GRANT_HANDLERS = Symbol('GRANT_HANDLERS');
