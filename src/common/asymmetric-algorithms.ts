/**
 * The asymmetric JWS algorithms (RFC 7518 §3, RFC 8037, RFC 9864) Latchkey verifies in JWTs that
 * others sign: DPoP proofs (RFC 9449 §4.2 forbids symmetric ones) and client assertions
 * (private_key_jwt, RFC 7523; symmetric ones would need the client's secret in the clear).
 */
export const ASYMMETRIC_JWS_ALGORITHMS = ['ES256', 'ES384', 'PS256', 'RS256', 'EdDSA', 'Ed25519'] as const;
export type AsymmetricJwsAlgorithm = (typeof ASYMMETRIC_JWS_ALGORITHMS)[number];

export function isAsymmetricJwsAlgorithm(value: unknown): value is AsymmetricJwsAlgorithm {
  return typeof value === 'string' && (ASYMMETRIC_JWS_ALGORITHMS as readonly string[]).includes(value);
}
