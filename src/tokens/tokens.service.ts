import { Inject, Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { randomBase64url, uuidv7 } from '../common/random.js';
import { AuditService } from '../audit/audit.service.js';
import { Clock } from '../common/clock.js';
import { DPOP_SCHEME, TokenType } from '../common/oauth.constants.js';
import { generateSecret, hashSecret, SECRET_PREFIX } from '../common/secrets.js';
import { oauthConfig, type OAuthConfig } from '../config/oauth.config.js';
import { Transactions } from '../database/transactions.js';
import { MacKeyCipher } from './mac-key-cipher.js';
import type { Actor } from './actor-claim.js';
import { TokenKind, type Token } from './token.entity.js';
import type { Gate } from '../database/gate.js';
import { TokenStore, type TokenInsert } from './token.store.js';

/** What a JWT access token asserts (RFC 9068 §2.2), as TokensService knows it for the row it writes. */
export interface AccessTokenClaims {
  /** The row's id: the token's jti, so introspection and revocation find the same token. */
  jti: string;
  clientId: string;
  userId: string | null;
  scope: string;
  audience: readonly string[];
  issuedAt: Date;
  expiresAt: Date;
  authTime: Date | null;
  dpopJkt: string | null;
  /** RFC 8693 §4.1: who acts for the subject, when the token was issued by a token exchange. */
  act?: Actor;
}

/** Signs a JWT access token; given when the token's resource asked for JWTs (JwtAccessTokens). */
export type AccessTokenSigner = (claims: AccessTokenClaims) => Promise<string>;

export interface TokenGrant {
  familyId: string;
  clientId: string;
  userId: string | null;
  /** Scope of the access token. */
  scope: string;
  /** Scope the refresh token carries (the whole original grant, RFC 6749 §6); omit for no refresh token. */
  refreshScope?: string;
  /** The access token's type: the client's registered access_token_type; bearer when omitted. */
  tokenType?: TokenType;
  /** Lifetime of the access token when it differs from ACCESS_TOKEN_TTL_SECONDS (the implicit grant's short one). */
  accessTokenTtlSeconds?: number;
  /** When the person signed in, for a grant that began with an OpenID Connect authentication (kept for refresh, Core §12.2). */
  authTime?: Date | null;
  /** The sign-in session's public id, for the same reason. */
  sid?: string | null;
  /** How the person signed in (RFC 8176 amr, space-separated), for the same reason. */
  amr?: string | null;
  /**
   * RFC 9449 §5: the token request came with a valid DPoP proof. The access token is bound to its
   * key; the refresh token too when `bindRefreshToken` (a public client's, §5: a confidential
   * client's refresh token is already bound to its authentication).
   */
  dpop?: { jkt: string; bindRefreshToken: boolean };
  /** RFC 8707: the resources the access token is restricted to; absent: no restriction. */
  audience?: readonly string[];
  /** The resources the whole grant named, kept on the refresh token so a refresh can narrow again (§2.2); absent: none. */
  refreshAudience?: readonly string[];
  /** RFC 9068: the access token is a JWT this signs, rather than an opaque random string. Needs `audience`. */
  jwt?: AccessTokenSigner;
  /**
   * RFC 8693: the access token is exchanged from the token with this id, and acts as `act` says
   * (§4.1). Revoking that token revokes this one. A grant with `exchangedFrom` has no refresh token.
   */
  exchangedFrom?: { parentId: string; act: Actor };
}

/** Tokens made by TokensService.mint, to be stored by TokensService.store. */
export interface MintedTokens {
  readonly rows: readonly TokenInsert[];
  readonly issued: IssuedTokens;
}

export interface IssuedTokens {
  accessToken: string;
  refreshToken?: string;
  expiresIn: number;
  scope: string;
  /** The token type as the response names it: bearer, mac, or DPoP for a DPoP-bound token (RFC 9449 §5). */
  tokenType: TokenType | typeof DPOP_SCHEME;
  /** A MAC token's key, returned to the client once (draft-ietf-oauth-v2-http-mac-02 §4.1); stored only encrypted. */
  macKey?: string;
}

@Injectable()
export class TokensService {
  constructor(
    private readonly tokenStore: TokenStore,
    @Inject(oauthConfig.KEY) private readonly config: OAuthConfig,
    private readonly clock: Clock,
    private readonly audit: AuditService,
    private readonly macKeys: MacKeyCipher,
    private readonly transactions: Transactions,
  ) {}

  /**
   * Issues an access token (and a refresh token when asked); only their hashes are stored. A MAC
   * token also gets a fresh 256-bit mac_key, stored encrypted and bound to the token's hash.
   */
  async issue(grant: TokenGrant, manager?: EntityManager): Promise<IssuedTokens> {
    return this.store(await this.mint(grant), manager);
  }

  /**
   * The tokens of a grant, made but not yet stored: their values, and the rows to insert. Signing
   * a JWT access token waits for the crypto thread pool, which a unit of work on SQLite must not
   * (group-commit.ts), so a grant that writes in a transaction mints before it and stores inside.
   */
  async mint(grant: TokenGrant): Promise<MintedTokens> {
    const accessTtl = grant.accessTokenTtlSeconds ?? this.config.accessTokenTtlSeconds;
    const id = uuidv7();
    const expiresAt = this.clock.inSeconds(accessTtl);
    const accessToken =
      grant.jwt && grant.audience
        ? await grant.jwt({ jti: id, clientId: grant.clientId, userId: grant.userId, scope: grant.scope, audience: grant.audience, issuedAt: this.clock.now(), expiresAt, authTime: grant.authTime ?? null, dpopJkt: grant.dpop?.jkt ?? null, ...(grant.exchangedFrom ? { act: grant.exchangedFrom.act } : {}) })
        : generateSecret(SECRET_PREFIX.accessToken);
    // The id was made first: a JWT access token carries it as its jti.
    const access = { ...this.row(TokenKind.Access, accessToken, grant, grant.scope, accessTtl, id), expiresAt };
    const tokenType = grant.tokenType ?? TokenType.Bearer;
    let macKey: string | undefined;
    if (tokenType === TokenType.Mac) {
      macKey = randomBase64url(32);
      access.tokenType = TokenType.Mac;
      access.macKey = await this.macKeys.encrypt(macKey, access.tokenHash);
    }
    if (grant.dpop) access.dpopJkt = grant.dpop.jkt;
    if (grant.audience) access.audience = grant.audience.join(' ');
    if (grant.exchangedFrom) {
      access.parentId = grant.exchangedFrom.parentId;
      access.act = JSON.stringify(grant.exchangedFrom.act);
    }
    const rows: TokenInsert[] = [access];
    let refreshToken: string | undefined;
    if (grant.refreshScope !== undefined) {
      refreshToken = generateSecret(SECRET_PREFIX.refreshToken);
      const refresh = this.row(TokenKind.Refresh, refreshToken, grant, grant.refreshScope, this.config.refreshTokenTtlSeconds);
      if (grant.dpop?.bindRefreshToken) refresh.dpopJkt = grant.dpop.jkt;
      if (grant.refreshAudience) refresh.audience = grant.refreshAudience.join(' ');
      rows.push(refresh);
    }
    const issued: IssuedTokens = { accessToken, refreshToken, expiresIn: accessTtl, scope: grant.scope, tokenType: grant.dpop ? DPOP_SCHEME : tokenType, ...(macKey ? { macKey } : {}) };
    return { rows, issued };
  }

  /** Stores minted tokens: in the caller's transaction; alone, on SQLite in this turn's group commit. */
  async store(minted: MintedTokens, manager?: EntityManager): Promise<IssuedTokens> {
    await this.tokenStore.insert(minted.rows, this.clock.now(), manager);
    return minted.issued;
  }

  /** A MAC token's mac_key, decrypted; undefined for other tokens and for a key that does not decrypt (tampered, moved, or its encryption key is gone). */
  async macKeyOf(token: Token): Promise<string | undefined> {
    if (token.tokenType !== TokenType.Mac || token.macKey === null) return undefined;
    return this.macKeys.decrypt(token.macKey, token.tokenHash);
  }

  /** One indexed lookup by the token's hash: on every API request, so a prepared statement. */
  findByValue(value: string): Promise<Token | null> {
    return this.tokenStore.findByHash(hashSecret(value));
  }

  /** Usable now: not revoked, not expired, and (for refresh tokens) not yet rotated. */
  isActive(token: Token): boolean {
    return token.revokedAt === null && token.consumedAt === null && token.expiresAt.getTime() > this.clock.now().getTime();
  }

  /**
   * Rotates a refresh token into the minted successors, atomically: undefined (nothing stored) when
   * it was already rotated or revoked, i.e. it is being reused (RFC 9700 §4.14.2). `sealed`, the
   * successors sealed for a repeat within the grace (RefreshRepeats), is kept on the rotated row by
   * the same statement.
   */
  rotateRefreshToken(tokenId: string, successors: MintedTokens, sealed: string | null = null): Promise<IssuedTokens | undefined> {
    const now = this.clock.now();
    return this.storeAfter(this.tokenStore.rotationGate(tokenId, now, sealed), successors, now);
  }

  /** Stores minted tokens only if `gate` (a conditional UPDATE of a single-use rule) changes one row, atomically; undefined when it did not. */
  async storeAfter(gate: Gate, minted: MintedTokens, now = this.clock.now()): Promise<IssuedTokens | undefined> {
    return (await this.tokenStore.insertAfter(gate, minted.rows, now)) ? minted.issued : undefined;
  }

  /**
   * A client revokes one of its tokens (RFC 7009 §2.1): a refresh token ends its whole family, an
   * access token ends with the tokens exchanged from it (RFC 8693), and nothing else. Audited, with the token's id and never its value, in the same transaction.
   */
  async revokeForClient(token: Token, clientId: string): Promise<void> {
    await this.transactions.run(async (manager) => {
      const now = this.clock.now();
      if (token.kind === TokenKind.Refresh) await this.tokenStore.revokeFamily(token.familyId, now, manager);
      else await this.tokenStore.revoke(token.id, now, manager);
      await this.audit.record({ actor: `client:${clientId}`, action: 'token.revoked', subject: `token:${token.id}`, details: { kind: token.kind, ...(token.userId ? { user: token.userId } : {}) } }, manager);
    });
  }

  /**
   * Revokes every token of a family: what one authorization code started, across all rotations.
   * Automatic revocations (a replayed code, a reused refresh token) are audited in the same transaction.
   */
  async revokeFamily(familyId: string, audit?: { actor: string; reason: string }): Promise<number> {
    const revoked = await this.transactions.run(async (manager) => {
      const count = await this.tokenStore.revokeFamily(familyId, this.clock.now(), manager);
      if (audit && count > 0) await this.audit.record({ actor: audit.actor, action: 'token.family_revoked', subject: `family:${familyId}`, details: { reason: audit.reason, tokens_revoked: count } }, manager);
      return count;
    });
    return revoked;
  }

  private row(kind: TokenKind, value: string, grant: TokenGrant, scope: string, ttlSeconds: number, id: string = uuidv7()): TokenInsert {
    return {
      // UUIDv7 (RFC 9562 §5.7): rows issued together land on the same primary-key pages instead of
      // random ones, so a group commit writes fewer pages (bench/RESULTS.md). The id is no secret.
      id,
      kind,
      tokenHash: hashSecret(value),
      familyId: grant.familyId,
      clientId: grant.clientId,
      userId: grant.userId,
      scope,
      expiresAt: this.clock.inSeconds(ttlSeconds),
      consumedAt: null,
      revokedAt: null,
      tokenType: TokenType.Bearer,
      macKey: null,
      authTime: grant.authTime ?? null,
      sid: grant.sid ?? null,
      amr: grant.amr ?? null,
      dpopJkt: null,
      audience: null,
      parentId: null,
      act: null,
    };
  }
}
