import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import { randomBytes } from 'node:crypto';
import { IsNull, type DataSource, type EntityManager, type Repository } from 'typeorm';
import { v7 as uuidv7 } from 'uuid';
import { AuditService } from '../audit/audit.service.js';
import { Clock } from '../common/clock.js';
import { TokenType } from '../common/oauth.constants.js';
import { generateSecret, hashSecret, SECRET_PREFIX } from '../common/secrets.js';
import { oauthConfig, type OAuthConfig } from '../config/oauth.config.js';
import { dateParameter, execute, placeholders, PreparedStatement, rowDate, toSqliteDate } from '../database/prepared-statement.js';
import { Transactions } from '../database/transactions.js';
import { MacKeyCipher } from './mac-key-cipher.js';
import { Token, TokenKind } from './token.entity.js';

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
}

export interface IssuedTokens {
  accessToken: string;
  refreshToken?: string;
  expiresIn: number;
  scope: string;
  tokenType: TokenType;
  /** A MAC token's key, returned to the client once (draft-ietf-oauth-v2-http-mac-02 §4.1); stored only encrypted. */
  macKey?: string;
}

/** Every column of a token row, under the entity's property names. */
const TOKEN_BY_HASH =
  'SELECT "id", "kind", "token_hash" AS "tokenHash", "family_id" AS "familyId", "client_id" AS "clientId", "user_id" AS "userId", "scope", ' +
  '"expires_at" AS "expiresAt", "consumed_at" AS "consumedAt", "revoked_at" AS "revokedAt", "created_at" AS "createdAt", "token_type" AS "tokenType", "mac_key" AS "macKey" ' +
  'FROM "tokens" WHERE "token_hash" = ?';

type TokenInsert = Omit<Token, 'createdAt' | 'client' | 'user'>;

type TokenRow = Omit<Token, 'expiresAt' | 'consumedAt' | 'revokedAt' | 'createdAt'> & { expiresAt: Date | string; consumedAt: Date | string | null; revokedAt: Date | string | null; createdAt: Date | string };

@Injectable()
export class TokensService {
  private readonly byHash: PreparedStatement<TokenRow>;

  constructor(
    @InjectRepository(Token) private readonly tokens: Repository<Token>,
    @Inject(oauthConfig.KEY) private readonly config: OAuthConfig,
    private readonly clock: Clock,
    private readonly audit: AuditService,
    private readonly macKeys: MacKeyCipher,
    private readonly transactions: Transactions,
    @InjectDataSource() dataSource: DataSource,
  ) {
    this.byHash = new PreparedStatement(dataSource, 'latchkey_token_by_hash', TOKEN_BY_HASH);
  }

  /**
   * Issues an access token (and a refresh token when asked); only their hashes are stored. A MAC
   * token also gets a fresh 256-bit mac_key, stored encrypted and bound to the token's hash.
   */
  async issue(grant: TokenGrant, manager: EntityManager = this.tokens.manager): Promise<IssuedTokens> {
    const accessToken = generateSecret(SECRET_PREFIX.accessToken);
    const accessTtl = grant.accessTokenTtlSeconds ?? this.config.accessTokenTtlSeconds;
    const access = this.row(TokenKind.Access, accessToken, grant, grant.scope, accessTtl);
    const tokenType = grant.tokenType ?? TokenType.Bearer;
    let macKey: string | undefined;
    if (tokenType === TokenType.Mac) {
      macKey = randomBytes(32).toString('base64url');
      access.tokenType = TokenType.Mac;
      access.macKey = await this.macKeys.encrypt(macKey, access.tokenHash);
    }
    const rows: TokenInsert[] = [access];
    let refreshToken: string | undefined;
    if (grant.refreshScope !== undefined) {
      refreshToken = generateSecret(SECRET_PREFIX.refreshToken);
      rows.push(this.row(TokenKind.Refresh, refreshToken, grant, grant.refreshScope, this.config.refreshTokenTtlSeconds));
    }
    await this.insert(rows, manager);
    return { accessToken, refreshToken, expiresIn: accessTtl, scope: grant.scope, tokenType, ...(macKey ? { macKey } : {}) };
  }

  /** A MAC token's mac_key, decrypted; undefined for other tokens and for a key that does not decrypt (tampered, moved, or its encryption key is gone). */
  async macKeyOf(token: Token): Promise<string | undefined> {
    if (token.tokenType !== TokenType.Mac || token.macKey === null) return undefined;
    return this.macKeys.decrypt(token.macKey, token.tokenHash);
  }

  /** One indexed lookup by the token's hash: on every API request, so a prepared statement. */
  async findByValue(value: string): Promise<Token | null> {
    const row = await this.byHash.one(hashSecret(value));
    if (!row) return null;
    return Object.assign(new Token(), row, {
      expiresAt: rowDate(row.expiresAt),
      consumedAt: rowDate(row.consumedAt),
      revokedAt: rowDate(row.revokedAt),
      createdAt: rowDate(row.createdAt),
    });
  }

  /** Usable now: not revoked, not expired, and (for refresh tokens) not yet rotated. */
  isActive(token: Token): boolean {
    return token.revokedAt === null && token.consumedAt === null && token.expiresAt.getTime() > this.clock.now().getTime();
  }

  /**
   * Rotates a refresh token: marks it consumed with one conditional UPDATE. `false` means it was
   * already rotated or revoked, i.e. it is being reused (RFC 9700 §4.14.2).
   */
  async consumeRefreshToken(tokenId: string, manager: EntityManager = this.tokens.manager): Promise<boolean> {
    const now = dateParameter(this.clock.now(), manager.connection.options.type);
    const sql = 'UPDATE "tokens" SET "consumed_at" = ? WHERE "id" = ? AND "kind" = ? AND "consumed_at" IS NULL AND "revoked_at" IS NULL';
    return (await execute(manager, sql, [now, tokenId, TokenKind.Refresh])) === 1;
  }

  /** Revokes one token (an access token, RFC 7009). */
  async revoke(tokenId: string): Promise<void> {
    await this.tokens.update({ id: tokenId, revokedAt: IsNull() }, { revokedAt: this.clock.now() });
  }

  /** Revokes every token of a family: what one authorization code started, across all rotations. */
  async revokeFamily(familyId: string, audit?: { actor: string; reason: string }): Promise<number> {
    const result = await this.tokens.update({ familyId, revokedAt: IsNull() }, { revokedAt: this.clock.now() });
    const revoked = result.affected ?? 0;
    // Automatic revocations (a replayed code, a reused refresh token) belong in the audit trail too.
    if (audit && revoked > 0) await this.audit.record({ actor: audit.actor, action: 'token.family_revoked', subject: `family:${familyId}`, details: { reason: audit.reason, tokens_revoked: revoked } });
    return revoked;
  }

  /**
   * One INSERT of all rows, in the caller's transaction; outside one, as Transactions.write
   * places it (on SQLite, in the group commit of this turn of the event loop).
   */
  private insert(rows: TokenInsert[], manager: EntityManager): Promise<void> {
    if (manager.queryRunner?.isTransactionActive) return this.insertRows(rows, manager);
    return this.transactions.write((batch) => this.insertRows(rows, batch));
  }

  /**
   * Plain SQL: TypeORM's insert builds the statement anew each time and then reads created_at
   * back, which doubled the cost of issuing a token (bench/RESULTS.md).
   */
  private async insertRows(rows: TokenInsert[], manager: EntityManager): Promise<void> {
    const sqlite = manager.connection.options.type !== 'postgres';
    const date = (value: Date | null) => (value && sqlite ? toSqliteDate(value) : value);
    const now = this.clock.now();
    const values = rows.map(() => '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)').join(', ');
    const parameters = rows.flatMap((r) => [r.id, r.kind, r.tokenHash, r.familyId, r.clientId, r.userId, r.scope, date(r.expiresAt), date(r.consumedAt), date(r.revokedAt), date(now), r.tokenType, r.macKey]);
    const sql = `INSERT INTO "tokens" ("id", "kind", "token_hash", "family_id", "client_id", "user_id", "scope", "expires_at", "consumed_at", "revoked_at", "created_at", "token_type", "mac_key") VALUES ${values}`;
    await manager.query(placeholders(sql, manager.connection.options.type), parameters);
  }

  private row(kind: TokenKind, value: string, grant: TokenGrant, scope: string, ttlSeconds: number): TokenInsert {
    return {
      // UUIDv7 (RFC 9562 §5.7): rows issued together land on the same primary-key pages instead of
      // random ones, so a group commit writes fewer pages (bench/RESULTS.md). The id is no secret.
      id: uuidv7(),
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
    };
  }
}
