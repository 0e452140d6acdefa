import { Inject, Injectable } from '@nestjs/common';
import { Clock } from '../common/clock.js';
import { hashSecret } from '../common/secrets.js';
import { oauthConfig, type OAuthConfig } from '../config/oauth.config.js';
import { openSuccessor, sealSuccessor } from './successor-seal.js';
import type { Token } from './token.entity.js';
import { TokenStore } from './token.store.js';
import type { IssuedTokens } from './tokens.service.js';

/**
 * The grace of refresh token rotation (issue 36): a client that sends the same refresh request
 * twice (two threads, a retry after a dropped answer) within REFRESH_REUSE_GRACE_SECONDS of the
 * rotation gets the same successor pair again, one chain, instead of the revocation RFC 9700
 * §4.14.2 prescribes for reuse. The pair is kept sealed on the rotated row (successor-seal.ts): the
 * database answers, whichever instance the repeat reaches. Outside the window, for another request
 * (scope, resources or DPoP key), without a sealed pair, or once the successor has been used, a
 * repeat is reuse as before (issue 43): the client that used the successor provably received the
 * first answer, so a repeat is no retry, and the window is no shelter for a thief.
 */
@Injectable()
export class RefreshRepeats {
  constructor(
    @Inject(oauthConfig.KEY) private readonly config: OAuthConfig,
    private readonly clock: Clock,
    private readonly tokenStore: TokenStore,
  ) {}

  /** The successors to keep on the rotated row: sealed with the presented token; null when the grace is off (nothing kept). */
  seal(presented: string, token: Token, issued: IssuedTokens, request: string): string | null {
    return this.config.refreshReuseGraceSeconds === 0 ? null : sealSuccessor(presented, token.id, { issued, request });
  }

  /**
   * The answer to a rotated, unrevoked `token` presented again by its client with `request`: the
   * first use's pair, its expires_in counting from the rotation; undefined when this is reuse.
   */
  async repeat(token: Token, presented: string, request: string): Promise<IssuedTokens | undefined> {
    if (token.consumedAt === null || token.revokedAt !== null || token.successor === null) return undefined;
    const elapsed = this.clock.now().getTime() - token.consumedAt.getTime();
    if (elapsed > this.config.refreshReuseGraceSeconds * 1000) return undefined;
    const successor = openSuccessor(presented, token.id, token.successor);
    // RFC 9449 §5: a DPoP-bound refresh token presented again needs a fresh proof, and one made
    // with the same key (part of `request`): a proof with another key is someone else's.
    if (successor === undefined || successor.request !== request || successor.issued.refreshToken === undefined) return undefined;
    // Last, and asked of the database rather than of `token` as read: the successor may be rotated
    // on another instance after that read. Either this sees it unused, and the answer comes before
    // that rotation, which then goes on normally; or it sees it used, and this is reuse.
    if (!(await this.tokenStore.successorUnused(token.id, hashSecret(successor.issued.refreshToken)))) return undefined;
    return { ...successor.issued, expiresIn: Math.max(0, successor.issued.expiresIn - Math.floor(elapsed / 1000)) };
  }
}
