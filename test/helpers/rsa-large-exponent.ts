/**
 * An RSA key pair whose public exponent is not 65537 but a large odd number (security issue 30,
 * finding 5): a real, working key, so a JWS it signs verifies; only the verification costs tens of
 * times more, since it raises the signature to the power e. Node's generateKeyPair takes e as a
 * JavaScript number, so the pair is built from a normal key's primes: e is drawn at random and d
 * is its inverse modulo λ(n) (RFC 8017 §3.1, §3.2).
 */
import type { JWK } from 'jose';
import { createPrivateKey, generateKeyPairSync, randomBytes, type KeyObject } from 'node:crypto';

export interface LargeExponentKey {
  privateKey: KeyObject;
  /** The public JWK: kty, n and the large e. */
  publicJwk: JWK;
  exponentBits: number;
}

const toBigInt = (value: string): bigint => BigInt(`0x${Buffer.from(value, 'base64url').toString('hex')}`);

function toBase64url(value: bigint): string {
  const hex = value.toString(16);
  return Buffer.from(hex.length % 2 === 0 ? hex : `0${hex}`, 'hex').toString('base64url');
}

const gcd = (a: bigint, b: bigint): bigint => (b === 0n ? a : gcd(b, a % b));

/** a⁻¹ mod m, or undefined when a and m are not coprime. */
function inverse(a: bigint, m: bigint): bigint | undefined {
  let [r0, r1, s0, s1] = [a % m, m, 1n, 0n];
  while (r1 !== 0n) {
    const q = r0 / r1;
    [r0, r1, s0, s1] = [r1, r0 - q * r1, s1, s0 - q * s1];
  }
  return r0 === 1n ? ((s0 % m) + m) % m : undefined;
}

/**
 * A 3072-bit RSA key with an `exponentBits`-bit public exponent (default 3000, the finding's). The
 * modulus stays at 3072 bits: OpenSSL refuses exponents over 64 bits only above that size.
 */
export function rsaKeyWithLargeExponent(exponentBits = 3000, modulusBits = 3072): LargeExponentKey {
  const normal = generateKeyPairSync('rsa', { modulusLength: modulusBits }).privateKey.export({ format: 'jwk' }) as Record<string, string>;
  const [p, q] = [toBigInt(normal.p), toBigInt(normal.q)];
  const lambda = ((p - 1n) * (q - 1n)) / gcd(p - 1n, q - 1n);
  for (;;) {
    const e = toBigInt(randomBytes(Math.ceil(exponentBits / 8)).toString('base64url')) % (1n << BigInt(exponentBits)) | (1n << BigInt(exponentBits - 1)) | 1n;
    const d = inverse(e, lambda);
    if (d === undefined) continue;
    const jwk = { kty: 'RSA', n: normal.n, e: toBase64url(e), d: toBase64url(d), p: normal.p, q: normal.q, dp: toBase64url(d % (p - 1n)), dq: toBase64url(d % (q - 1n)), qi: normal.qi };
    return { privateKey: createPrivateKey({ key: jwk, format: 'jwk' }), publicJwk: { kty: 'RSA', n: jwk.n, e: jwk.e }, exponentBits };
  }
}
