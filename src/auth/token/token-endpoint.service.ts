import { Inject, Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import type { Client } from '../../clients/client.entity.js';
import { ClientsService } from '../../clients/clients.service.js';
import { isForeignKeyViolation } from '../../database/foreign-key-violation.js';
import { MetricsService } from '../../metrics/metrics.service.js';
import { clientAddress } from '../../rate-limit/client-address.js';
import { ClientDpopProof } from '../client-dpop-proof.js';
import { FAPI2_GRANT_TYPES, SecurityProfiles } from '../../clients/security-profile.js';
import { InvalidClientError, InvalidDpopProofError, InvalidGrantError, InvalidRequestError, OAuthError, UnauthorizedClientError, UnsupportedGrantTypeError } from '../errors/oauth-error.js';
import { GRANT_HANDLERS, type GrantHandler } from '../grants/grant-handler.js';
import type { TokenRequestDto } from './token-request.dto.js';
import type { TokenResponse } from './token-response.js';

/**
 * POST /token dispatcher: finds the handler for grant_type and refuses unknown grants and grants the
 * client is not registered for before any handler runs (RFC 6749 §5.2).
 */
@Injectable()
export class TokenEndpointService {
  private readonly handlers: ReadonlyMap<string, GrantHandler>;

  constructor(
    @Inject(GRANT_HANDLERS) handlers: GrantHandler[],
    private readonly metrics: MetricsService,
    private readonly dpop: ClientDpopProof,
    private readonly profiles: SecurityProfiles,
    private readonly clients: ClientsService,
  ) {
    this.handlers = new Map(handlers.map((h) => [h.grantType, h]));
  }

  get supportedGrantTypes(): string[] {
    return [...this.handlers.keys()];
  }

  /** Counts the outcome per grant type; an unknown or missing grant_type is labelled "unsupported", never echoed. */
  async exchange(client: Client, request: TokenRequestDto, http: FastifyRequest): Promise<TokenResponse> {
    const grantType = request.grant_type !== undefined && this.handlers.has(request.grant_type) ? request.grant_type : 'unsupported';
    try {
      const response = await this.dispatch(client, request, http);
      this.metrics.tokenIssued(grantType);
      return response;
    } catch (caught) {
      const error = isForeignKeyViolation(caught) ? await this.deletedMeanwhile(client) : caught;
      if (error instanceof OAuthError) this.metrics.tokenRequestRefused(grantType, error.error);
      throw error;
    }
  }

  /**
   * The tokens or code this request wrote named a client or person that was deleted after the
   * request read it (a foreign key violation: nothing was written). The client learns which: its
   * own registration is gone (RFC 6749 §5.2 invalid_client, as its next request would hear), or
   * the person the grant was made for is (invalid_grant: the grant is no longer valid).
   */
  private async deletedMeanwhile(client: Client): Promise<OAuthError> {
    if (!(await this.clients.existsNow(client.id))) return new InvalidClientError('This client was deleted while the request ran');
    return new InvalidGrantError('The person this grant was made for was deleted while the request ran');
  }

  private async dispatch(client: Client, request: TokenRequestDto, http: FastifyRequest): Promise<TokenResponse> {
    if (request.grant_type === undefined) throw new InvalidRequestError('The grant_type parameter is required');
    const handler = this.handlers.get(request.grant_type);
    if (!handler) throw new UnsupportedGrantTypeError(`The grant type "${request.grant_type}" is not supported`);
    if (!client.grantTypes.includes(handler.grantType)) {
      throw new UnauthorizedClientError(`This client is not registered for the ${handler.grantType} grant`);
    }
    const fapi = this.profiles.applies(client);
    // FAPI 2.0 §5.3.2.1: no password grant (nor implicit, refused at /authorize), whatever was registered before.
    if (fapi && !FAPI2_GRANT_TYPES.has(handler.grantType)) throw new UnauthorizedClientError(`The FAPI 2.0 Security Profile this client is held to does not allow the ${handler.grantType} grant`);
    const parameters = handler.parameters(request);
    const dpopJkt = await this.dpopProof(client, http, fapi);
    return handler.handle(parameters, { client, clientAddress: () => clientAddress(http), dpopJkt });
  }

  /**
   * RFC 9449 §5: a DPoP proof of this request binds the tokens to its key; a client registered
   * with dpop_bound_access_tokens must send one (§5.2). A MAC client's tokens carry their own key.
   */
  private async dpopProof(client: Client, http: FastifyRequest, fapi: boolean): Promise<string | undefined> {
    const jkt = await this.dpop.read(client, http);
    // FAPI 2.0 §5.3.2.1: sender-constrained access tokens; DPoP is the method offered here.
    if (jkt === undefined && (client.openId.dpopBoundAccessTokens || fapi)) {
      throw new InvalidDpopProofError('This client must receive DPoP-bound access tokens (dpop_bound_access_tokens, or the FAPI 2.0 profile): send a DPoP proof');
    }
    return jkt;
  }
}
