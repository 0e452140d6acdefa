/**
 * A DPoP key as a client holds one (RFC 9449): proofs for any request, made with jose, and the
 * server's nonce remembered from every answer that hands one out (§8 at the token endpoint, §9 at
 * a resource). `send` makes a request with a fresh proof, and once more with the nonce when the
 * first was refused for the lack of it, as the client libraries do.
 */
import { createHash, randomUUID } from 'node:crypto';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';

/** What a request answered (a fetch Response, or a Reply with its JSON body), as far as the nonce retry looks. */
export interface Answered {
  status: number;
  headers: Headers;
}

export interface DpopKey {
  /** RFC 7638 SHA-256 thumbprint of the public key: the cnf.jkt of tokens bound to it. */
  readonly jkt: string;
  /** A fresh proof for `method` `url` (§4.2), with ath for `accessToken` (§4.3, at a resource). */
  proof(method: string, url: URL, accessToken?: string): Promise<string>;
  /** `request` with a proof for `method` `url`; once more when the server asks for its nonce. */
  send<A extends Answered>(method: string, url: URL, request: (proof: string) => Promise<A>, accessToken?: string): Promise<A>;
}

/** A use_dpop_nonce refusal: the token endpoint's JSON error (§8), or a resource's challenge (§9). */
function asksForNonce(answer: Answered): boolean {
  const body = (answer as { body?: unknown }).body;
  const error = typeof body === 'object' && body !== null && 'error' in body ? body.error : undefined;
  return error === 'use_dpop_nonce' || (answer.status === 401 && (answer.headers.get('www-authenticate') ?? '').includes('use_dpop_nonce'));
}

export async function newDpopKey(): Promise<DpopKey> {
  const { publicKey, privateKey } = await generateKeyPair('ES256');
  const jwk: JWK = await exportJWK(publicKey);
  const jkt = await calculateJwkThumbprint(jwk, 'sha256');
  let nonce: string | undefined;

  const proof = (method: string, url: URL, accessToken?: string): Promise<string> => {
    const ath = accessToken === undefined ? {} : { ath: createHash('sha256').update(accessToken, 'ascii').digest('base64url') };
    const claims = { jti: randomUUID(), htm: method, htu: `${url.origin}${url.pathname}`, iat: Math.floor(Date.now() / 1000), ...(nonce ? { nonce } : {}), ...ath };
    return new SignJWT(claims).setProtectedHeader({ typ: 'dpop+jwt', alg: 'ES256', jwk }).sign(privateKey as CryptoKey);
  };

  async function send<A extends Answered>(method: string, url: URL, request: (proof: string) => Promise<A>, accessToken?: string): Promise<A> {
    const once = async (): Promise<A> => {
      const answer = await request(await proof(method, url, accessToken));
      nonce = answer.headers.get('dpop-nonce') ?? nonce;
      return answer;
    };
    const first = await once();
    return asksForNonce(first) ? once() : first;
  }

  return { jkt, proof, send };
}
