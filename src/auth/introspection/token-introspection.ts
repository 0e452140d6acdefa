import { Injectable } from '@nestjs/common';
import type { Client } from '../../clients/client.entity.js';
import { ClientsService } from '../../clients/clients.service.js';
import { DPOP_SCHEME } from '../../common/oauth.constants.js';
import { SubjectIdentifiers } from '../../openid/subject-identifiers.js';
import { GroupsClaim, type GroupsClaimValue } from '../../groups/groups-claim.js';
import { acrOf, parseAmr } from '../../common/authentication-context.js';
import { IntrospectionAccess } from '../../resource-servers/introspection-access.js';
import { parseActor, type Actor } from '../../tokens/actor-claim.js';
import { TokenKind, type Token } from '../../tokens/token.entity.js';
import { TokensService } from '../../tokens/tokens.service.js';
import { InvalidRequestError, UnauthorizedClientError } from '../errors/oauth-error.js';

/** RFC 7662 §2.2 introspection response. */
export interface IntrospectionResponse extends GroupsClaimValue {
  active: boolean;
  scope?: string;
  client_id?: string;
  sub?: string;
  exp?: number;
  iat?: number;
  token_type?: string;
  /** RFC 9449 §6.2: the key a DPoP-bound token is bound to, for the resource server to check the proof against. */
  cnf?: { jkt: string };
  /** RFC 7662 §2.2, RFC 8707: the resources the token is restricted to. */
  aud?: string[];
  /** When the person signed in, and the level that sign-in reached (authentication-context.ts): for resource servers that require one (issue 33). */
  auth_time?: number;
  acr?: string;
  /** RFC 8693 §4.1: who acts for the subject (client_id), nesting the earlier actors, for a token from a token exchange. */
  act?: Actor;
}

const INACTIVE: IntrospectionResponse = { active: false };

/**
 * What the introspection endpoint (RFC 7662) says about a token to the client asking. The caller
 * must be a confidential client registered with `tokens:introspect` (§4); which tokens it may see
 * is IntrospectionAccess's decision. Anything not usable right now, or not the caller's to see, is
 * `{ "active": false }`, nothing more.
 */
@Injectable()
export class TokenIntrospection {
  constructor(
    private readonly tokens: TokensService,
    private readonly access: IntrospectionAccess,
    private readonly clients: ClientsService,
    private readonly subjects: SubjectIdentifiers,
    private readonly groups: GroupsClaim,
  ) {}

  async introspect(caller: Client, value: string | undefined): Promise<IntrospectionResponse> {
    const refusal = this.access.refusal(caller);
    if (refusal) throw new UnauthorizedClientError(refusal);
    if (value === undefined) throw new InvalidRequestError('The token parameter is required');
    const token = await this.tokens.findByValue(value);
    if (!token || !this.tokens.isActive(token)) return INACTIVE;
    // Both reads are by key; neither depends on the other.
    const [visible, owner] = await Promise.all([this.access.maySee(caller, token.audience), this.ownerOf(token, caller)]);
    if (!visible || owner === null) return INACTIVE;
    const { sub, groups } = owner;
    return {
      active: true,
      scope: token.scope,
      client_id: token.clientId,
      ...(sub !== undefined ? { sub } : {}),
      exp: Math.floor(token.expiresAt.getTime() / 1000),
      iat: Math.floor(token.createdAt.getTime() / 1000),
      // RFC 7662 §2.2: the type of the token, as in the token response (RFC 6749 §7.1): bearer, mac or DPoP.
      ...(token.kind === TokenKind.Access ? { token_type: token.dpopJkt !== null ? DPOP_SCHEME : token.tokenType } : {}),
      ...(token.dpopJkt !== null ? { cnf: { jkt: token.dpopJkt } } : {}),
      ...(token.audience !== null ? { aud: token.audience.split(' ') } : {}),
      // Tokens a person's sign-in led to; not client_credentials ones, which no one signed in for.
      ...(token.userId !== null && token.authTime !== null ? { auth_time: Math.floor(token.authTime.getTime() / 1000), acr: acrOf(parseAmr(token.amr)) } : {}),
      ...(token.act !== null ? { act: parseActor(token.act) } : {}),
      // Issue 46: the person's groups, when the token's client opted in to the claim (as in its JWT access tokens).
      ...groups,
    };
  }

  /**
   * The person's sub as the token's client knows it (OpenID Connect Core §8.1): the one its ID
   * tokens, userinfo and JWT access tokens say, so that introspection agrees with the JWT it
   * describes (RFC 9068 §2.2) and never hands the person's global id out for a pairwise client's
   * token (RFC 9068 §6). Undefined when the token speaks for no person (client_credentials); null
   * when its client was deleted a moment ago (its tokens go with it). With it, the person's groups claim.
   */
  private async ownerOf(token: Token, caller: Client): Promise<{ sub?: string; groups: GroupsClaimValue } | null> {
    if (token.userId === null) return { groups: {} };
    const client = token.clientId === caller.id ? caller : await this.clients.findById(token.clientId);
    // The groups claim is the token's client's setting (GroupsClaim: no query unless it opted in).
    return client ? { sub: this.subjects.of(client, token.userId), groups: await this.groups.of(client, token.userId) } : null;
  }
}
