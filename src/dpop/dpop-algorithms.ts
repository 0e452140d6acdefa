/**
 * The JWS algorithms a DPoP proof may be signed with (RFC 9449 §5.1,
 * dpop_signing_alg_values_supported): asymmetric only (§4.2).
 */
export const DPOP_SIGNING_ALGORITHMS = ['ES256', 'ES384', 'PS256', 'RS256', 'EdDSA', 'Ed25519'] as const;
