import { Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import type { Client } from '../clients/client.entity.js';
import { SecurityProfiles } from '../clients/security-profile.js';
import { TokenType } from '../common/oauth.constants.js';
import { DpopProofVerifier } from '../dpop/dpop-proof.verifier.js';
import { InvalidDpopProofError, InvalidRequestError, UseDpopNonceError } from './errors/oauth-error.js';

/**
 * The DPoP proof a client sends to an endpoint of the authorization server (the token endpoint,
 * RFC 9449 §5; the pushed authorization request endpoint, §10.1): checked for this request, and
 * refused with the endpoint's JSON errors (invalid_dpop_proof, use_dpop_nonce).
 */
@Injectable()
export class ClientDpopProof {
  constructor(
    private readonly verifier: DpopProofVerifier,
    private readonly profiles: SecurityProfiles,
  ) {}

  /** The thumbprint of the proof's key; undefined when the request carries no DPoP header. */
  async read(client: Client, http: FastifyRequest): Promise<string | undefined> {
    // Most token requests carry none: the plain header says so without building headersDistinct.
    if (http.headers.dpop === undefined) return undefined;
    // Every DPoP header line as sent (Node would join repeated ones into one value), so that two are refused as two.
    const header = http.raw.headersDistinct.dpop;
    if (client.accessTokenType === TokenType.Mac) throw new InvalidRequestError('This client is registered for MAC tokens, which cannot also be DPoP-bound');
    const result = await this.verifier.verify(header, { method: http.method, path: http.url, algorithms: this.profiles.dpopAlgorithms(client) });
    if ('jkt' in result) return result.jkt;
    throw result.error === 'use_dpop_nonce' ? new UseDpopNonceError(result.description) : new InvalidDpopProofError(result.description);
  }
}
