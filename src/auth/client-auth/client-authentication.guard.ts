import { Injectable, type ExecutionContext } from '@nestjs/common';
import { AuthGuard } from '@nestjs/passport';
import type { FastifyRequest } from 'fastify';
import type { Client } from '../../clients/client.entity.js';
import { ClientAuthMethod, Strategy } from '../../common/oauth.constants.js';
import { InvalidClientError, InvalidRequestError } from '../errors/oauth-error.js';
import { ClientCredentialsVerifier } from './client-credentials.verifier.js';

export interface AuthenticatedClientRequest extends FastifyRequest {
  client: Client;
  clientAuthMethod: ClientAuthMethod;
}

/**
 * Authenticates the client at the token endpoint (RFC 6749 §2.3, §3.2.1) with exactly one method:
 * - client_secret_basic: the Authorization header, through passport-http;
 * - client_secret_post: client_id and client_secret in the form body;
 * - none: a public client naming itself with client_id (it proves possession with PKCE instead).
 * A body client_id that disagrees with the authenticated client is refused, and so is a method
 * other than the one the client registered (token_endpoint_auth_method).
 */
@Injectable()
export class ClientAuthenticationGuard extends AuthGuard(Strategy.ClientBasic) {
  constructor(private readonly verifier: ClientCredentialsVerifier) {
    // passport stores the authenticated client on request.client.
    super({ session: false, property: 'client' });
  }

  override async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<AuthenticatedClientRequest>();
    const body = (request.body ?? {}) as Record<string, unknown>;
    const bodyId = singleParam(body, 'client_id');
    const bodySecret = singleParam(body, 'client_secret');
    const header = request.headers.authorization;

    if (header !== undefined) {
      // RFC 6749 §2.3: a client MUST NOT use more than one authentication method per request.
      if (bodySecret !== undefined) throw new InvalidRequestError('Use either HTTP Basic or client_secret in the body, not both');
      if (!/^basic /i.test(header)) throw new InvalidClientError('Client authentication must use the HTTP Basic scheme');
      await super.canActivate(context);
      request.clientAuthMethod = ClientAuthMethod.ClientSecretBasic;
    } else if (bodySecret !== undefined) {
      const client = bodyId === undefined ? null : await this.verifier.verifySecret(bodyId, bodySecret);
      if (!client) throw new InvalidClientError('Client authentication failed');
      request.client = client;
      request.clientAuthMethod = ClientAuthMethod.ClientSecretPost;
    } else if (bodyId !== undefined) {
      const client = await this.verifier.findPublic(bodyId);
      if (!client) throw new InvalidClientError('Client authentication failed');
      request.client = client;
      request.clientAuthMethod = ClientAuthMethod.None;
    } else {
      throw new InvalidClientError('Client authentication is required');
    }

    if (bodyId !== undefined && bodyId !== request.client.id) {
      throw new InvalidClientError('client_id does not match the authenticated client');
    }
    // RFC 7591 §2 and OpenID Connect Core §9: the client authenticates with the method it
    // registered, and no other, so that a secret meant for one channel is not accepted on another.
    if (request.clientAuthMethod !== request.client.tokenEndpointAuthMethod) {
      throw new InvalidClientError(`This client is registered for ${request.client.tokenEndpointAuthMethod}; authenticate with that method`);
    }
    return true;
  }

  /** passport's verdict: the client, or a failure that becomes invalid_client. */
  override handleRequest<TUser = Client>(err: unknown, client: TUser | false): TUser {
    if (err) throw err;
    if (!client) throw new InvalidClientError('Client authentication failed');
    return client;
  }
}

/** A parameter that must appear at most once (RFC 6749 §3.2: parameters MUST NOT be included more than once). */
function singleParam(body: Record<string, unknown>, name: string): string | undefined {
  const value = body[name];
  // RFC 6749 §3.2: parameters sent without a value MUST be treated as if they were omitted.
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string') throw new InvalidRequestError(`The ${name} parameter must appear exactly once`);
  return value;
}
