import { Injectable } from '@nestjs/common';
import type { Client } from '../../clients/client.entity.js';
import { PushedRequests } from '../../pushed-requests/pushed-requests.service.js';
import { AUTHORIZATION_PARAMS } from '../authorize/authorization-request.js';
import { AuthorizationRequestValidator } from '../authorize/authorization-request.validator.js';
import type { FastifyRequest } from 'fastify';
import { ClientDpopProof } from '../client-dpop-proof.js';
import { AuthorizationRedirectError, InvalidDpopProofError, InvalidRequestError, UnverifiedClientOrRedirectError } from '../errors/oauth-error.js';

/** RFC 9126 §2.2. */
export interface PushedAuthorizationResponse {
  request_uri: string;
  expires_in: number;
}

/**
 * Checks a pushed authorization request exactly as /authorize would (RFC 9126 §2.1: the client,
 * its redirect URI, response type, scope, PKCE, the OpenID parameters) and stores its parameters.
 * The client is authenticated, so every problem is answered to it directly, as JSON (§2.3),
 * rather than shown to a person or sent to a redirect URI.
 */
@Injectable()
export class ParService {
  constructor(
    private readonly validator: AuthorizationRequestValidator,
    private readonly pushedRequests: PushedRequests,
    private readonly dpop: ClientDpopProof,
  ) {}

  async push(client: Client, form: unknown, http: FastifyRequest): Promise<PushedAuthorizationResponse> {
    const body = form !== null && typeof form === 'object' && !Array.isArray(form) ? (form as Record<string, unknown>) : {};
    // §2.1: request_uri MUST NOT be pushed (an empty one is no parameter, RFC 6749 §3.1). A request
    // object is refused by the validator below with request_not_supported, as at /authorize.
    if (body.request_uri !== undefined && body.request_uri !== '') throw new InvalidRequestError('request_uri must not be sent to the pushed authorization request endpoint (RFC 9126 §2.1)');
    // The client_id is the authenticated client's (the guard refused a body client_id naming another).
    const query = { ...body, client_id: client.id };
    try {
      await this.validator.validate(query, '', { pushed: true });
    } catch (error) {
      if (error instanceof AuthorizationRedirectError) throw error.oauthError;
      if (error instanceof UnverifiedClientOrRedirectError) throw new InvalidRequestError(error.description);
      throw error;
    }
    const parameters: Record<string, string | string[]> = {};
    for (const name of AUTHORIZATION_PARAMS) {
      const value = body[name];
      if (name !== 'client_id' && typeof value === 'string' && value !== '') parameters[name] = value;
    }
    // RFC 8707 §2: resource may be repeated; the validator has checked each one.
    const resource = body.resource;
    if (typeof resource === 'string' ? resource !== '' : Array.isArray(resource)) parameters.resource = resource as string | string[];
    // RFC 9449 §10.1: a DPoP proof sent with the push binds the code to its key, as dpop_jkt would; both must agree.
    const jkt = await this.dpop.read(client, http);
    if (jkt !== undefined) {
      if (parameters.dpop_jkt !== undefined && parameters.dpop_jkt !== jkt) throw new InvalidDpopProofError('dpop_jkt is not the thumbprint of the DPoP proof\'s key');
      parameters.dpop_jkt = jkt;
    }
    const { requestUri, expiresIn } = await this.pushedRequests.push(client.id, parameters);
    return { request_uri: requestUri, expires_in: expiresIn };
  }
}
