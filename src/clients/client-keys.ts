import { createPublicKey } from 'node:crypto';
import { ASYMMETRIC_JWS_ALGORITHMS, isAsymmetricJwsAlgorithm, privateMembersOf, rsaExponentProblem, type AsymmetricJwsAlgorithm } from '../common/asymmetric-algorithms.js';
import { DomainError } from '../common/domain-error.js';
import { ClientAuthMethod } from '../common/oauth.constants.js';
import { redirectUriProblem } from './redirect-uri.policy.js';

/** A JSON Web Key Set (RFC 7517 §5) as a client registers it: public keys only. */
export interface ClientJwks {
  keys: PublicJwk[];
}

/** A JWK's members are strings, but for x5c and key_ops (arrays) and ext (a boolean). */
export type PublicJwk = Record<string, string | boolean | string[]>;

/**
 * The keys a private_key_jwt client proves itself with (RFC 7591 §2 jwks / jwks_uri, OpenID
 * Dynamic Registration §2 token_endpoint_auth_signing_alg): exactly one of the set itself or
 * the https URL that serves it. All null for every other client.
 */
export interface ClientKeys {
  jwks: ClientJwks | null;
  jwksUri: string | null;
  tokenEndpointAuthSigningAlg: AsymmetricJwsAlgorithm | null;
}

/** The metadata under its wire names, as registered and shown back. */
export interface ClientKeyMetadata {
  jwks?: ClientJwks;
  jwks_uri?: string;
  token_endpoint_auth_signing_alg?: string;
}

export const NO_CLIENT_KEYS: Readonly<ClientKeys> = { jwks: null, jwksUri: null, tokenEndpointAuthSigningAlg: null };

/** Bounds on a registered key set: a client rotating keys needs two or three. */
const MAX_KEYS = 10;
/** RFC 7518 §3.3: RSA keys of at least 2048 bits. */
const MIN_RSA_BITS = 2048;

export const CLIENT_KEY_METADATA_SCHEMA = {
  jwks: { type: 'object', properties: { keys: { type: 'array', items: { type: 'object' }, minItems: 1, maxItems: MAX_KEYS } }, required: ['keys'] },
  jwks_uri: { type: 'string', maxLength: 2000 },
  token_endpoint_auth_signing_alg: { type: 'string', maxLength: 16 },
} as const;

const invalid = (message: string): DomainError => new DomainError('invalid_client_metadata', message);

/**
 * Checks a registration's key metadata against its authentication method: a private_key_jwt
 * client must register exactly one of jwks and jwks_uri (RFC 7591 §2: never both); other clients
 * register neither, since nothing else here reads them. Keys must be public, asymmetric, meant
 * for signatures and importable; jwks_uri is an https URL (http only on loopback, for development),
 * fetched later through the SSRF-protected outbound client.
 */
export function clientKeysFrom(metadata: ClientKeyMetadata, method: ClientAuthMethod): ClientKeys {
  const { jwks, jwks_uri: jwksUri, token_endpoint_auth_signing_alg: alg } = metadata;
  if (method !== ClientAuthMethod.PrivateKeyJwt) {
    if (jwks !== undefined || jwksUri !== undefined || alg !== undefined) {
      throw invalid('jwks, jwks_uri and token_endpoint_auth_signing_alg are used only with token_endpoint_auth_method "private_key_jwt".');
    }
    return NO_CLIENT_KEYS;
  }
  if ((jwks === undefined) === (jwksUri === undefined)) throw invalid('A private_key_jwt client registers exactly one of jwks and jwks_uri (RFC 7591 §2).');
  if (alg !== undefined && !isAsymmetricJwsAlgorithm(alg)) throw invalid(`Unsupported token_endpoint_auth_signing_alg "${alg}"; use ${ASYMMETRIC_JWS_ALGORITHMS.join(', ')}.`);
  if (jwksUri !== undefined) {
    const problem = redirectUriProblem(jwksUri) ?? (/^https?:/i.test(jwksUri) ? undefined : 'must be an https URL');
    if (problem) throw invalid(`jwks_uri ${JSON.stringify(jwksUri)} ${problem}.`);
  }
  if (jwks !== undefined) jwks.keys.forEach((key, index) => assertPublicSigningKey(key, index));
  return { jwks: jwks ?? null, jwksUri: jwksUri ?? null, tokenEndpointAuthSigningAlg: alg ?? null };
}

/** The key metadata under its wire names; nothing for clients that have none. */
export function clientKeyMetadataOf(keys: ClientKeys): ClientKeyMetadata {
  return {
    ...(keys.jwks !== null ? { jwks: keys.jwks } : {}),
    ...(keys.jwksUri !== null ? { jwks_uri: keys.jwksUri } : {}),
    ...(keys.tokenEndpointAuthSigningAlg !== null ? { token_endpoint_auth_signing_alg: keys.tokenEndpointAuthSigningAlg } : {}),
  };
}

/** A key a client may register, or invalid_client_metadata naming what is wrong with it. */
export function assertPublicSigningKey(key: PublicJwk, index: number): void {
  const where = `jwks.keys[${index}]`;
  if (key.kty !== 'RSA' && key.kty !== 'EC' && key.kty !== 'OKP') throw invalid(`${where}: kty must be RSA, EC or OKP (an asymmetric key).`);
  const secret = privateMembersOf(key);
  if (secret.length > 0) throw invalid(`${where}: holds private key material (${secret.join(', ')}); register the public key only.`);
  if (key.use !== undefined && key.use !== 'sig') throw invalid(`${where}: use must be "sig".`);
  if (key.kid !== undefined && (typeof key.kid !== 'string' || key.kid.length > 200)) throw invalid(`${where}: kid must be a string of at most 200 characters.`);
  if (key.alg !== undefined && !isAsymmetricJwsAlgorithm(key.alg)) throw invalid(`${where}: alg must be one of ${ASYMMETRIC_JWS_ALGORITHMS.join(', ')}.`);
  const exponent = rsaExponentProblem(key);
  if (exponent) throw invalid(`${where}: ${exponent}.`);
  let bits: number | undefined;
  try {
    bits = createPublicKey({ key: key as never, format: 'jwk' }).asymmetricKeyDetails?.modulusLength;
  } catch {
    throw invalid(`${where}: is not a valid ${String(key.kty)} public key.`);
  }
  if (key.kty === 'RSA' && (bits ?? 0) < MIN_RSA_BITS) throw invalid(`${where}: RSA keys must have at least ${MIN_RSA_BITS} bits.`);
}
