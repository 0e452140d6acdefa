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

/**
 * The names a pinned algorithm goes by: RFC 9864 makes "Ed25519" the fully specified name of what
 * "EdDSA" means for an Ed25519 key, and clients sign under either (oauth4webapi and openid-client 6
 * write "Ed25519", older jose and openid-client 5 "EdDSA"), so a pin of one accepts the other.
 */
export function namesOfAlgorithm(alg: string): string[] {
  return alg === 'EdDSA' || alg === 'Ed25519' ? ['EdDSA', 'Ed25519'] : [alg];
}

/** JWK members that only a private key (or a symmetric one) has (RFC 7518 §6.2.2, §6.3.2, §6.4.1; RFC 8037 §2). */
const PRIVATE_JWK_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];

/** The private members a JWK carries: none for a public key. An RSA JWK with p and q but no d is still private. */
export function privateMembersOf(jwk: object): string[] {
  return PRIVATE_JWK_MEMBERS.filter((member) => member in jwk);
}

/** RFC 7518 §6.3.1.2: e as a base64urlUInt in the fewest octets; 65537 is written "AQAB" and only so. */
const RSA_PUBLIC_EXPONENT = 'AQAB';

/**
 * Why a JWK someone else gives us (a client's key, a DPoP proof's) is refused for its RSA public
 * exponent, or undefined. Verifying a signature raises it to the power e: a 3000-bit e costs about
 * forty times what e = 65537 does, per request (issue 30). Every key that real software makes has
 * e = 65537 (RFC 8017 §3.1 does not require it; FIPS 186-5 §5.4 bounds it to 2^16 < e < 2^256), so
 * that one alone is accepted, checked on the JWK's text before anything imports or verifies with it.
 */
export function rsaExponentProblem(jwk: object): string | undefined {
  const { kty, e } = jwk as { kty?: unknown; e?: unknown };
  if (kty !== 'RSA' || e === RSA_PUBLIC_EXPONENT) return undefined;
  return `an RSA key's public exponent (e) must be 65537 ("${RSA_PUBLIC_EXPONENT}")`;
}
