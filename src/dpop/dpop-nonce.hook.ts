import type { FastifyInstance } from 'fastify';
import { DPOP_SCHEME } from '../common/oauth.constants.js';
import type { DpopNonces } from './dpop-nonces.js';

const DPOP_AUTHORIZATION = new RegExp(`^${DPOP_SCHEME} `, 'i');

/**
 * RFC 9449 §8.2, §9: a request that speaks DPoP (a DPoP header, or `Authorization: DPoP`) gets the
 * server's current nonce in a DPoP-Nonce header, on success and on error alike, at the token
 * endpoint and every protected resource: the client's next proof can carry it without a
 * use_dpop_nonce round trip, also after a rotation. Other requests are left alone.
 */
export function offerDpopNonces(fastify: FastifyInstance, nonces: DpopNonces): void {
  if (!nonces.required) return;
  fastify.addHook('onSend', (request, reply, _payload, done) => {
    if (request.headers.dpop !== undefined || DPOP_AUTHORIZATION.test(request.headers.authorization ?? '')) void reply.header('DPoP-Nonce', nonces.current());
    done();
  });
}
