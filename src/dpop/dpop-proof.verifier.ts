import { Inject, Injectable } from '@nestjs/common';
import { calculateJwkThumbprint, errors, importJWK, jwtVerify, type FlattenedJWSInput, type JWSHeaderParameters } from 'jose';
import { createHash, type webcrypto } from 'node:crypto';
import { privateMembersOf, rsaExponentProblem } from '../common/asymmetric-algorithms.js';
import { Clock } from '../common/clock.js';
import { appConfig, type AppConfig } from '../config/app.config.js';
import { dpopConfig, type DpopConfig } from '../config/dpop.config.js';
import { DpopNonces } from './dpop-nonces.js';
import { JtiUseStore } from '../replay/jti-use.store.js';

/** Bounds on what we parse: a proof is a compact JWS of a few hundred bytes (an RSA key makes it ~1 KB). */
const MAX_PROOF_LENGTH = 8192;
const MAX_JTI_LENGTH = 256;
/** Proof headers whose imported key and thumbprint are remembered (one per active client key). */
const MAX_REMEMBERED_KEYS = 10_000;

/** A proof key, imported, with its RFC 7638 thumbprint. */
interface ProofKey {
  key: webcrypto.CryptoKey;
  jkt: string;
}

/** Why a proof was refused: its own error codes (RFC 9449 §5, §7.1, §8, §9). */
export type DpopRefusal = { error: 'invalid_dpop_proof' | 'use_dpop_nonce'; description: string };

/** The request a proof must describe. */
export interface ProofContext {
  method: string;
  /** The request-target as received (path and query); the proof's htu names it under the issuer, without the query (§4.3). */
  path: string;
  /** At a protected resource: the access token the proof must hash to (ath, §4.3, §7). */
  accessToken?: string;
  /** The key thumbprint the proof must be made with (a bound token's cnf.jkt). */
  boundTo?: string;
  /** The JWS algorithms the proof may use: DPOP_SIGNING_ALGORITHMS, or fewer (SecurityProfiles.dpopAlgorithms). */
  algorithms: readonly string[];
}

/** An accepted proof: the thumbprint of its key (RFC 7638), which the token is or becomes bound to. */
export interface AcceptedProof {
  jkt: string;
}

/**
 * Checks a DPoP proof as RFC 9449 §4.3 lists: one well-formed JWT of type dpop+jwt, signed by the
 * public key in its header with an asymmetric algorithm, naming this request (htm, htu), recent
 * (iat), with this server's nonce when nonces are required, hashing the access token (ath) when
 * one is presented, made with the token's key when it is bound; and (§11.1) never seen before.
 * The replay check is one INSERT, run last, so a proof refused for any other reason burns nothing.
 */
@Injectable()
export class DpopProofVerifier {
  private readonly issuer: string;
  private readonly keys = new Map<string, ProofKey>();

  constructor(
    private readonly nonces: DpopNonces,
    private readonly uses: JtiUseStore,
    private readonly clock: Clock,
    @Inject(dpopConfig.KEY) private readonly config: DpopConfig,
    @Inject(appConfig.KEY) app: AppConfig,
  ) {
    this.issuer = app.issuer;
  }

  async verify(header: string | string[] | undefined, context: ProofContext): Promise<AcceptedProof | DpopRefusal> {
    // §4.3 (1): exactly one DPoP header.
    if (Array.isArray(header)) {
      if (header.length > 1) return invalid('Send exactly one DPoP header');
      header = header[0];
    }
    if (header === undefined || header === '') return invalid('Send one DPoP proof in the DPoP header');
    if (header.length > MAX_PROOF_LENGTH) return invalid(`The DPoP proof is longer than ${MAX_PROOF_LENGTH} characters`);

    let payload: Record<string, unknown>;
    let jkt: string;
    try {
      // The key is the header's jwk (§4.3 (6)); keyOf refuses one holding private parts (§4.3 (7)).
      let key: ProofKey | undefined;
      const verified = await jwtVerify(header, async (protectedHeader, token) => (key = await this.keyOf(protectedHeader, token)).key, { typ: 'dpop+jwt', algorithms: context.algorithms as string[] });
      payload = verified.payload;
      jkt = key!.jkt;
    } catch (error) {
      return invalid(proofProblem(error, context.algorithms));
    }

    const { jti, htm, htu, iat, ath, nonce } = payload;
    if (typeof jti !== 'string' || jti.length === 0 || jti.length > MAX_JTI_LENGTH) return invalid(`The DPoP proof needs a jti of 1 to ${MAX_JTI_LENGTH} characters`);
    if (htm !== context.method) return invalid(`The DPoP proof's htm must be the request's method, ${context.method}`);
    if (typeof htu !== 'string' || !this.namesThisRequest(htu, context.path)) return invalid(`The DPoP proof's htu must be ${this.htuOf(context.path)}`);
    const now = Math.floor(this.clock.now().getTime() / 1000);
    if (typeof iat !== 'number' || !Number.isFinite(iat) || Math.abs(now - iat) > this.config.proofMaxAgeSeconds) {
      return invalid(`The DPoP proof's iat must be within ${this.config.proofMaxAgeSeconds} seconds of the server's clock`);
    }
    if (context.accessToken !== undefined && ath !== createHash('sha256').update(context.accessToken).digest('base64url')) {
      return invalid('The DPoP proof\'s ath must be the hash of the access token it is sent with');
    }
    if (this.nonces.required && (typeof nonce !== 'string' || !this.nonces.isValid(nonce))) {
      return { error: 'use_dpop_nonce', description: 'Resend the request with a DPoP proof that carries the nonce in the DPoP-Nonce header' };
    }
    if (context.boundTo !== undefined && jkt !== context.boundTo) return invalid('The DPoP proof is not made with the key this token is bound to');

    // §11.1: a proof is accepted once, across instances, for as long as its iat is acceptable.
    if (!(await this.uses.use('dpop_proof', jkt, jti, new Date((iat + this.config.proofMaxAgeSeconds + 1) * 1000)))) return invalid('This DPoP proof was already used');
    return { jkt };
  }

  /**
   * What jose's EmbeddedJWK does (import the header's jwk, refuse a private one), remembered per
   * protected header: a client sends the same header, key included, with every proof, and the
   * import and the RFC 7638 thumbprint each cost a trip to the crypto thread pool. A pure function
   * of the header's bytes, so a per-instance memo changes no decision. Bounded, least recent out.
   */
  private async keyOf(header: JWSHeaderParameters, token: FlattenedJWSInput): Promise<ProofKey> {
    const segment = token.protected ?? '';
    const cached = this.keys.get(segment);
    if (cached) {
      this.keys.delete(segment);
      this.keys.set(segment, cached);
      return cached;
    }
    const jwk = header.jwk;
    if (jwk === null || typeof jwk !== 'object' || Array.isArray(jwk)) throw new errors.JWSInvalid('"jwk" (JSON Web Key) Header Parameter must be a JSON object');
    // §4.3 (7): WebCrypto imports an RSA jwk with p and q but no d as a public key; those members are the private key all the same.
    if (privateMembersOf(jwk).length > 0) throw new PrivateKeyInHeader();
    // Before the import and the signature: verifying with a large RSA exponent is what costs (issue 30).
    const exponent = rsaExponentProblem(jwk);
    if (exponent) throw new UnacceptedKeyInHeader(exponent);
    const key = await importJWK({ ...jwk, ext: true }, header.alg);
    if (key instanceof Uint8Array || key.type !== 'public') throw new errors.JWSInvalid('"jwk" (JSON Web Key) Header Parameter must be a public key');
    const entry = { key, jkt: await calculateJwkThumbprint(jwk, 'sha256') };
    this.keys.set(segment, entry);
    if (this.keys.size > MAX_REMEMBERED_KEYS) this.keys.delete(this.keys.keys().next().value!);
    return entry;
  }

  /**
   * Whether htu names this request (§4.3 (9)). A client writes the URL as we do, so an equal string
   * settles it; only another spelling of it (RFC 3986 §6.2: case, default port, dot segments) goes
   * through the URL parser, which a DPoP read would otherwise run twice per request.
   */
  private namesThisRequest(htu: string, path: string): boolean {
    return htu === this.targetOf(path) || normalisedHtu(htu) === this.htuOf(path);
  }

  /** The URL the proof must name: the issuer's origin and path with the request's path, no query (§4.3 (9), RFC 3986 §6.2 normalisation by the URL parser). */
  private htuOf(path: string): string {
    const target = this.targetOf(path);
    return normalisedHtu(target) ?? target;
  }

  /** The issuer with the request's path, without its query, as written. */
  private targetOf(path: string): string {
    const query = path.indexOf('?');
    return `${this.issuer}${query === -1 ? path : path.slice(0, query)}`;
  }
}

/**
 * A URL's origin and path after RFC 3986 §6.2.2 and §6.2.3 normalisation, as §4.3 (9) asks. The
 * URL parser does case, default ports and dot segments; percent-encoding (§6.2.2.1, §6.2.2.2) it
 * leaves alone, so unreserved characters are decoded and the other escapes upper-cased here.
 */
function normalisedHtu(value: string): string | undefined {
  if (!URL.canParse(value)) return undefined;
  const url = new URL(value);
  return `${url.origin}${url.pathname.replace(/%[0-9a-fA-F]{2}/g, normalisedEscape)}`;
}

function normalisedEscape(escape: string): string {
  const character = String.fromCharCode(parseInt(escape.slice(1), 16));
  return /^[A-Za-z0-9\-._~]$/.test(character) ? character : escape.toUpperCase();
}

/** A proof whose header jwk carries private key members (§4.2: it "MUST NOT contain a private key"). */
class PrivateKeyInHeader extends errors.JWSInvalid {}

/** A proof whose header jwk is a public key we do not verify with (an RSA exponent other than 65537). */
class UnacceptedKeyInHeader extends errors.JWSInvalid {}

function invalid(description: string): DpopRefusal {
  return { error: 'invalid_dpop_proof', description };
}

/** What jose found wrong, in words for the client; never the proof itself. */
function proofProblem(error: unknown, algorithms: readonly string[]): string {
  if (error instanceof PrivateKeyInHeader) return 'The DPoP proof\'s jwk header holds private key members; it must be the public key alone (§4.3)';
  if (error instanceof UnacceptedKeyInHeader) return `The DPoP proof's jwk header is not accepted: ${error.message}`;
  if (error instanceof errors.JOSEAlgNotAllowed) return `The DPoP proof must be signed with one of ${algorithms.join(', ')}`;
  if (error instanceof errors.JWSSignatureVerificationFailed) return 'The DPoP proof\'s signature does not verify with the key in its header';
  if (error instanceof errors.JWTClaimValidationFailed && error.claim === 'typ') return 'The DPoP proof\'s typ header must be dpop+jwt';
  if (error instanceof errors.JWTExpired) return 'The DPoP proof has expired';
  return 'The DPoP proof is not a JWT signed with the public key in its header (RFC 9449 §4.2)';
}
