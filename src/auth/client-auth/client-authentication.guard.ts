import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { AuthGuard } from '@nestjs/passport';
import type { FastifyRequest } from 'fastify';
import type { Client } from '../../clients/client.entity.js';
import { SecurityProfiles } from '../../clients/security-profile.js';
import { ClientAuthMethod, JWT_BEARER_ASSERTION_TYPE, Strategy } from '../../common/oauth.constants.js';
import { InvalidClientAssertionError, InvalidClientError, InvalidRequestError } from '../errors/oauth-error.js';

export interface AuthenticatedClientRequest extends FastifyRequest {
  client: Client;
}

/** A passport guard for one client authentication strategy; its failure is invalid_client. */
function passportGuardFor(strategy: string): { canActivate(context: ExecutionContext): Promise<boolean> } {
  class ClientPassportGuard extends AuthGuard(strategy) {
    constructor() {
      // passport stores the authenticated client on request.client.
      super({ session: false, property: 'client' });
    }

    override handleRequest<TUser = Client>(err: unknown, client: TUser | false): TUser {
      if (err) throw err;
      if (!client) throw new InvalidClientError('Client authentication failed');
      return client;
    }
  }
  return new ClientPassportGuard() as { canActivate(context: ExecutionContext): Promise<boolean> };
}

/** Each method's passport strategy (client-basic.strategy.ts, client-form.strategies.ts). */
const PASSPORT_BY_METHOD: Record<ClientAuthMethod, { canActivate(context: ExecutionContext): Promise<boolean> }> = {
  [ClientAuthMethod.ClientSecretBasic]: passportGuardFor(Strategy.ClientBasic),
  [ClientAuthMethod.ClientSecretPost]: passportGuardFor(Strategy.ClientSecretPost),
  [ClientAuthMethod.PrivateKeyJwt]: passportGuardFor(Strategy.ClientPrivateKeyJwt),
  [ClientAuthMethod.None]: passportGuardFor(Strategy.ClientNone),
};

/**
 * Authenticates the client at the token, revocation and introspection endpoints (RFC 6749 §2.3,
 * §3.2.1) with exactly one method, each through its passport strategy:
 * - client_secret_basic: the Authorization header, through passport-http;
 * - client_secret_post: client_id and client_secret in the form body;
 * - private_key_jwt: client_assertion_type and a signed client_assertion in the form body (RFC 7523 §2.2);
 * - none: a public client naming itself with client_id (it proves possession with PKCE instead).
 * This guard decides which method a request uses, and then what holds for every method: a body
 * client_id that disagrees with the authenticated client is refused, and so is a method other than
 * the one the client registered (token_endpoint_auth_method).
 */
@Injectable()
export class ClientAuthenticationGuard implements CanActivate {
  constructor(private readonly profiles: SecurityProfiles) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<AuthenticatedClientRequest>();
    const { method, bodyId } = presentedMethod(request);
    await PASSPORT_BY_METHOD[method].canActivate(context);

    if (bodyId !== undefined && bodyId !== request.client.id) {
      const message = 'client_id does not match the authenticated client';
      throw method === ClientAuthMethod.PrivateKeyJwt ? new InvalidClientAssertionError(message) : new InvalidClientError(message);
    }
    // RFC 7591 §2 and OpenID Connect Core §9: the client authenticates with the method it
    // registered, and no other, so that a secret meant for one channel is not accepted on another.
    if (method !== request.client.tokenEndpointAuthMethod) {
      throw new InvalidClientError(`This client is registered for ${request.client.tokenEndpointAuthMethod}; authenticate with that method`);
    }
    // FAPI 2.0 §5.3.2.1: private_key_jwt (or mutual TLS, not offered), whatever was registered before the server required the profile.
    if (method !== ClientAuthMethod.PrivateKeyJwt && this.profiles.applies(request.client)) {
      throw new InvalidClientError('The FAPI 2.0 Security Profile this client is held to requires private_key_jwt client authentication');
    }
    return true;
  }
}

/** The one authentication method the request presents (RFC 6749 §2.3: never more than one), and the form's client_id. */
function presentedMethod(request: FastifyRequest): { method: ClientAuthMethod; bodyId?: string } {
  const body = (request.body ?? {}) as Record<string, unknown>;
  const bodyId = singleParam(body, 'client_id');
  const bodySecret = singleParam(body, 'client_secret');
  const assertionType = singleParam(body, 'client_assertion_type');
  const assertion = singleParam(body, 'client_assertion');
  const header = request.headers.authorization;
  if (assertionType !== undefined || assertion !== undefined) {
    // RFC 7521 §4.2: both parameters, the JWT type, and no other credentials beside them.
    if (header !== undefined || bodySecret !== undefined) throw new InvalidRequestError('Use one client authentication method: a client assertion, or a secret, not both');
    if (assertionType !== JWT_BEARER_ASSERTION_TYPE) throw new InvalidClientAssertionError(`client_assertion_type must be ${JWT_BEARER_ASSERTION_TYPE}`);
    if (assertion === undefined) throw new InvalidClientAssertionError('client_assertion is required with client_assertion_type');
    return { method: ClientAuthMethod.PrivateKeyJwt, bodyId };
  }
  if (header !== undefined) {
    if (bodySecret !== undefined) throw new InvalidRequestError('Use either HTTP Basic or client_secret in the body, not both');
    if (!/^basic /i.test(header)) throw new InvalidClientError('Client authentication must use the HTTP Basic scheme');
    return { method: ClientAuthMethod.ClientSecretBasic, bodyId };
  }
  if (bodySecret !== undefined) {
    if (bodyId === undefined) throw new InvalidClientError('Client authentication failed');
    return { method: ClientAuthMethod.ClientSecretPost, bodyId };
  }
  if (bodyId !== undefined) return { method: ClientAuthMethod.None, bodyId };
  throw new InvalidClientError('Client authentication is required');
}

/** A parameter that must appear at most once (RFC 6749 §3.2: parameters MUST NOT be included more than once). */
function singleParam(body: Record<string, unknown>, name: string): string | undefined {
  const value = body[name];
  // RFC 6749 §3.2: parameters sent without a value MUST be treated as if they were omitted.
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string') throw new InvalidRequestError(`The ${name} parameter must appear exactly once`);
  return value;
}
