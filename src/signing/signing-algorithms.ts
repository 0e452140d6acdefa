import { generateKeyPair, type KeyObject } from 'node:crypto';
import { promisify } from 'node:util';

/**
 * The JWS algorithms ID tokens are signed with (RFC 7518 §3, RFC 8037): RS256 is the one every
 * OpenID provider must offer (Core §15.1) and the default; ES256 and EdDSA (Ed25519) per client.
 */
export const SigningAlgorithm = {
  RS256: 'RS256',
  ES256: 'ES256',
  EdDSA: 'EdDSA',
} as const;
export type SigningAlgorithm = (typeof SigningAlgorithm)[keyof typeof SigningAlgorithm];

export const SIGNING_ALGORITHMS: readonly SigningAlgorithm[] = Object.values(SigningAlgorithm);
export const DEFAULT_SIGNING_ALGORITHM = SigningAlgorithm.RS256;

export function isSigningAlgorithm(value: unknown): value is SigningAlgorithm {
  return typeof value === 'string' && (SIGNING_ALGORITHMS as readonly string[]).includes(value);
}

const generate = promisify(generateKeyPair) as (type: string, options: object) => Promise<{ publicKey: KeyObject; privateKey: KeyObject }>;

/** A fresh key pair for `alg`: RSA 2048 (NIST SP 800-57 through 2030), P-256, Ed25519. */
export function generateSigningKeyPair(alg: SigningAlgorithm): Promise<{ publicKey: KeyObject; privateKey: KeyObject }> {
  switch (alg) {
    case SigningAlgorithm.RS256:
      return generate('rsa', { modulusLength: 2048 });
    case SigningAlgorithm.ES256:
      return generate('ec', { namedCurve: 'P-256' });
    case SigningAlgorithm.EdDSA:
      return generate('ed25519', {});
  }
}
