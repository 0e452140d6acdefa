import { Inject, Injectable } from '@nestjs/common';
import { Clock } from '../../common/clock.js';
import { ExchangeTokenType, GrantType } from '../../common/oauth.constants.js';
import { formatScope, parseScope, splitScope } from '../../common/scope.js';
import { oauthConfig, type OAuthConfig } from '../../config/oauth.config.js';
import { exchangedScope } from '../../token-exchange/exchange-scope.js';
import { isRefusal, TokenExchanges } from '../../token-exchange/token-exchanges.js';
import { delegatedTo, parseActor } from '../../tokens/actor-claim.js';
import { TokensService } from '../../tokens/tokens.service.js';
import { InvalidDpopProofError, InvalidRequestError, InvalidScopeError, UnauthorizedClientError } from '../errors/oauth-error.js';
import { ResourceIndicators } from '../resource-indicators.js';
import type { TokenRequestDto } from '../token/token-request.dto.js';
import { JwtAccessTokens } from '../token/jwt-access-tokens.js';
import { toTokenResponse, type TokenResponse } from '../token/token-response.js';
import type { GrantContext, GrantHandler } from './grant-handler.js';
import { GrantSignInLevel, SIGN_IN_BELOW_FLOOR } from './grant-sign-in-level.js';

/** RFC 8693 §2.1. */
export interface TokenExchangeParameters {
  subjectToken: string;
  subjectTokenType: string;
  actorToken?: string;
  actorTokenType?: string;
  requestedTokenType?: string;
  scope?: string;
  /** `resource` and `audience` together: both name the next service, read as resource identifiers (RFC 8707). */
  targets?: string[];
}

/** A parameter that may be repeated, as a list. */
const values = (value: string | string[] | undefined): string[] => (value === undefined ? [] : Array.isArray(value) ? value : [value]);

/**
 * RFC 8693, token exchange, for confidential clients an administrator registered for it: a
 * service holding a person's access token gets one for the next service, restricted to it, that
 * still says who the person is and records the acting client as `act` (§4.1), nested along a
 * chain. Never impersonation: every issued token carries act. Its scope lies within both the
 * subject token's and the exchanging client's registered scope; a DPoP-bound subject token needs a
 * proof of its key and the result stays bound to it. No refresh token (§2.2.1: the exchanging
 * service asks again with a live subject token), and no longer life than the subject token has
 * left. The new token joins the subject token's family and names it as its parent, so revoking the
 * subject token or its grant revokes it too (TokenStore).
 */
@Injectable()
export class TokenExchangeGrant implements GrantHandler<TokenExchangeParameters> {
  readonly grantType = GrantType.TokenExchange;

  constructor(
    private readonly exchanges: TokenExchanges,
    private readonly tokens: TokensService,
    private readonly resources: ResourceIndicators,
    private readonly jwtAccessTokens: JwtAccessTokens,
    private readonly clock: Clock,
    @Inject(oauthConfig.KEY) private readonly config: OAuthConfig,
    private readonly signInLevel: GrantSignInLevel,
  ) {}

  parameters(form: TokenRequestDto): TokenExchangeParameters {
    // §2.1: subject_token and subject_token_type are REQUIRED.
    if (form.subject_token === undefined) throw new InvalidRequestError('The subject_token parameter is required');
    if (form.subject_token_type === undefined) throw new InvalidRequestError('The subject_token_type parameter is required');
    const targets = [...values(form.resource), ...values(form.audience)];
    return {
      subjectToken: form.subject_token,
      subjectTokenType: form.subject_token_type,
      actorToken: form.actor_token,
      actorTokenType: form.actor_token_type,
      requestedTokenType: form.requested_token_type,
      scope: form.scope,
      targets: this.resources.parse(targets.length === 0 ? undefined : targets),
    };
  }

  async handle(request: TokenExchangeParameters, { client, dpopJkt }: GrantContext): Promise<TokenResponse> {
    // Registration refuses it already: a public client proves nothing about who acts.
    if (client.isPublic) throw new UnauthorizedClientError('Only a confidential client may use the token exchange grant');
    if (request.requestedTokenType !== undefined && request.requestedTokenType !== ExchangeTokenType.AccessToken) {
      throw new InvalidRequestError(`requested_token_type must be ${ExchangeTokenType.AccessToken}`);
    }
    // §2.2.2: an invalid or unacceptable subject or actor token is invalid_request.
    const subject = await this.exchanges.subjectToken(client, request.subjectToken, request.subjectTokenType);
    if (isRefusal(subject)) throw new InvalidRequestError(subject.refused);
    const actor = await this.exchanges.actorToken(client, request.actorToken, request.actorTokenType);
    if (isRefusal(actor)) throw new InvalidRequestError(actor.refused);
    // RFC 9449 §7 (FAPI 2.0 §5.3.2.1 sender-constraining): a DPoP-bound subject token is used only
    // with a proof of its key, and an exchange is a use of it; without that rule a holder of the token
    // alone (and the client's secret) would get a bearer token for it. invalid_dpop_proof (§5): the
    // token is sound, the proof is what is missing or made with the wrong key, as for a client that
    // must send one. The issued token is then bound to the same key (below, dpopJkt).
    if (subject.dpopJkt !== null && dpopJkt !== subject.dpopJkt) throw new InvalidDpopProofError('The subject_token is bound to a DPoP key: send a DPoP proof made with it');
    // The exchanging client's floor and the person's requirement, as they are now, against the sign-in
    // the subject token records (its amr): a subject token below them is unacceptable by policy, which
    // §2.2.2 answers invalid_request. subjectToken() refused tokens without a person.
    if (!(await this.signInLevel.stillMeets(client, subject.userId!, subject.amr))) throw new InvalidRequestError(SIGN_IN_BELOW_FLOOR);

    // The issued token is restricted to the next service; a token for "anything" would be the subject token again.
    if (request.targets === undefined) throw new InvalidRequestError('Name the service the token is for with resource (or audience)');
    const audience = await this.resources.resolve(request.targets);
    // Narrow, never widen (as RFC 6749 §6 for a refresh), within the subject token and the client's
    // registration both; omitted means what both allow (exchangedScope).
    const requested = request.scope === undefined ? undefined : parseScope(request.scope);
    if (request.scope !== undefined && requested === undefined) throw new InvalidScopeError('The scope parameter is malformed');
    const scopes = exchangedScope(requested, [
      { name: 'the subject token\'s scope', scope: splitScope(subject.scope) },
      { name: 'this client\'s registered scope', scope: splitScope(client.scope) },
    ]);
    if (isRefusal(scopes)) throw new InvalidScopeError(scopes.refused);
    // No longer than the subject token has left: an exchange must not extend a grant.
    const left = Math.floor((subject.expiresAt.getTime() - this.clock.now().getTime()) / 1000);
    if (left < 1) throw new InvalidRequestError('The subject_token is invalid, expired or revoked, or this client did not receive it');

    const scope = formatScope(scopes);
    const minted = await this.tokens.mint({
      familyId: subject.familyId,
      clientId: client.id,
      userId: subject.userId,
      scope,
      tokenType: client.accessTokenType,
      accessTokenTtlSeconds: Math.min(this.config.accessTokenTtlSeconds, left),
      authTime: subject.authTime,
      sid: subject.sid,
      amr: subject.amr,
      dpop: dpopJkt === undefined ? undefined : { jkt: dpopJkt, bindRefreshToken: false },
      ...this.jwtAccessTokens.restrictedTo(audience, client),
      exchangedFrom: { parentId: subject.id, act: delegatedTo(client.id, parseActor(subject.act)) },
    });
    const issued = await this.exchanges.issue(minted, { client, subject, target: audience.uris, scope, withActorToken: actor !== undefined });
    // §2.2.1: issued_token_type is REQUIRED; a JWT access token is an access token too.
    return { ...toTokenResponse(issued), issued_token_type: ExchangeTokenType.AccessToken };
  }
}
