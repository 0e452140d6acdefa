import { ASYMMETRIC_JWS_ALGORITHMS } from '../common/asymmetric-algorithms.js';

/** The JWS algorithms a DPoP proof may be signed with (RFC 9449 §5.1, dpop_signing_alg_values_supported): asymmetric only (§4.2). */
export const DPOP_SIGNING_ALGORITHMS = ASYMMETRIC_JWS_ALGORITHMS;
