import { DPOP_SCHEME, TokenType } from '../common/oauth.constants.js';
import { errorDescription } from '../common/error-description.js';
import type { AccessScheme } from './token-principal.js';
import { BEARER_REALM } from './token-principal.js';

/**
 * Why a protected route refuses a request, as RFC 6750 §3.1 names it. `missing`: no credentials
 * at all (or a scheme we do not take), answered with bare challenges and no error code (§3.1).
 */
export type AccessRefusal =
  | { error: 'missing' }
  | { error: 'invalid_request'; description: string }
  /** `dpopBound`: a DPoP-bound token sent under another scheme; the answer also offers the DPoP challenge (RFC 9449 §7.2). */
  | { error: 'invalid_token'; description: string; dpopBound?: true }
  | { error: 'insufficient_scope'; description: string; scope: string }
  /** RFC 9449 §7.1, §9: the DPoP proof does not hold, or must carry the server's nonce. */
  | { error: 'invalid_dpop_proof' | 'use_dpop_nonce'; description: string };

/**
 * A refused request, and the scheme the client tried, so that the challenge speaks the same one
 * (a MAC-signed request is answered under MAC). Thrown by the access-token guard; turned into a
 * response only by ProtectedResourceExceptionFilter.
 */
export class AccessDenied extends Error {
  constructor(
    readonly refusal: AccessRefusal,
    readonly scheme?: AccessScheme,
  ) {
    super(refusal.error === 'missing' ? 'This request needs an access token' : refusal.description);
    this.name = 'AccessDenied';
  }
}

export interface AccessDeniedResponse {
  status: number;
  error: string;
  description: string;
  challenge: string;
}

/**
 * The status, body and `WWW-Authenticate` challenge of a refusal (RFC 6750 §3, §3.1; RFC 9110 §11.6.1).
 * `dpopAlgorithms`: what a DPoP challenge names (RFC 9449 §7.1), SecurityProfiles.dpopAlgorithms().
 */
export function describeAccessDenied({ refusal, scheme }: AccessDenied, dpopAlgorithms: readonly string[]): AccessDeniedResponse {
  const dpopAlgs = dpopAlgorithms.join(' ');
  switch (refusal.error) {
    case 'missing':
      // Every scheme the API accepts is offered: several challenges, comma-separated.
      return {
        status: 401,
        error: 'unauthorized',
        description: 'This request needs an access token: send "Authorization: Bearer <token>", "Authorization: DPoP <token>" with a DPoP proof for a DPoP-bound token, or a MAC-signed request for a MAC token',
        challenge: `Bearer realm="${BEARER_REALM}", DPoP algs="${dpopAlgs}", MAC`,
      };
    case 'invalid_request':
      return { status: 400, error: refusal.error, description: refusal.description, challenge: challenge(scheme, dpopAlgs, refusal.error, refusal.description) };
    case 'invalid_token': {
      const refused = challenge(scheme, dpopAlgs, refusal.error, refusal.description);
      // RFC 9110 §11.6.1: several challenges in one header; the second names the scheme that would work.
      return { status: 401, error: refusal.error, description: refusal.description, challenge: refusal.dpopBound ? `${refused}, ${DPOP_SCHEME} algs="${dpopAlgs}"` : refused };
    }
    case 'invalid_dpop_proof':
    case 'use_dpop_nonce':
      return { status: 401, error: refusal.error, description: refusal.description, challenge: challenge(DPOP_SCHEME, dpopAlgs, refusal.error, refusal.description) };
    case 'insufficient_scope':
      return { status: 403, error: refusal.error, description: refusal.description, challenge: challenge(scheme, dpopAlgs, refusal.error, refusal.description, { scope: refusal.scope }) };
    default:
      return unreachable(refusal);
  }
}

/**
 * `Bearer realm="…", error="…", …`; for a MAC-signed request `MAC error="…", …` (the MAC draft has
 * no realm); for a DPoP request `DPoP algs="…", error="…", …` (RFC 9449 §7.1).
 */
function challenge(scheme: AccessScheme | undefined, dpopAlgs: string, error: string, description: string, extra: Record<string, string> = {}): string {
  const [name, own]: [string, Record<string, string>] =
    scheme === TokenType.Mac ? ['MAC', {}] : scheme === DPOP_SCHEME ? [DPOP_SCHEME, { algs: dpopAlgs }] : ['Bearer', { realm: BEARER_REALM }];
  // RFC 6750 §3: quoted values hold neither " nor \; error_description only RFC 6749's printable ASCII.
  const parameters = Object.entries({ ...own, error, error_description: errorDescription(description), ...extra })
    .map(([key, value]) => `${key}="${value.replace(/["\\]/g, '')}"`)
    .join(', ');
  return `${name} ${parameters}`;
}

function unreachable(value: never): never {
  throw new Error(`Unhandled access refusal ${JSON.stringify(value)}`);
}
