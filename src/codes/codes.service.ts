import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import type { DataSource, EntityManager, Repository } from 'typeorm';
import { v7 as uuidv7 } from 'uuid';
import { Clock } from '../common/clock.js';
import { generateSecret, hashSecret, SECRET_PREFIX } from '../common/secrets.js';
import { oauthConfig, type OAuthConfig } from '../config/oauth.config.js';
import { dateParameter, execute, PreparedStatement, rowDate } from '../database/prepared-statement.js';
import { Transactions } from '../database/transactions.js';
import { AuthorizationCode } from './authorization-code.entity.js';

export interface CodeGrant {
  clientId: string;
  userId: string;
  redirectUri: string;
  redirectUriInRequest: boolean;
  scope: string;
  codeChallenge: string | null;
}

/** Every column of a code row, under the entity's property names. */
const CODE_BY_HASH =
  'SELECT "id", "code_hash" AS "codeHash", "client_id" AS "clientId", "user_id" AS "userId", "redirect_uri" AS "redirectUri", ' +
  '"redirect_uri_in_request" AS "redirectUriInRequest", "scope", "code_challenge" AS "codeChallenge", "expires_at" AS "expiresAt", ' +
  '"consumed_at" AS "consumedAt", "created_at" AS "createdAt" FROM "authorization_codes" WHERE "code_hash" = ?';

type CodeRow = Omit<AuthorizationCode, 'redirectUriInRequest' | 'expiresAt' | 'consumedAt' | 'createdAt' | 'client' | 'user'> & {
  redirectUriInRequest: boolean | number;
  expiresAt: Date | string;
  consumedAt: Date | string | null;
  createdAt: Date | string;
};

@Injectable()
export class CodesService {
  private readonly byHash: PreparedStatement<CodeRow>;

  constructor(
    @InjectRepository(AuthorizationCode) private readonly codes: Repository<AuthorizationCode>,
    @Inject(oauthConfig.KEY) private readonly config: OAuthConfig,
    private readonly clock: Clock,
    private readonly transactions: Transactions,
    @InjectDataSource() dataSource: DataSource,
  ) {
    this.byHash = new PreparedStatement(dataSource, 'latchkey_code_by_hash', CODE_BY_HASH);
  }

  /** Issues a code for an approved authorization request; returns the code, of which only the hash is kept. */
  async issue(grant: CodeGrant): Promise<string> {
    const code = generateSecret(SECRET_PREFIX.authorizationCode);
    // Plain SQL, like the token INSERT: the query builder cost more than the write (bench/RESULTS.md).
    const dialect = this.codes.manager.connection.options.type;
    const date = (value: Date) => dateParameter(value, dialect);
    const sql =
      'INSERT INTO "authorization_codes" ("id", "code_hash", "client_id", "user_id", "redirect_uri", "redirect_uri_in_request", "scope", "code_challenge", "expires_at", "consumed_at", "created_at") ' +
      'VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?)';
    const parameters = [
      // Time-ordered like the token ids (tokens.service.ts); it becomes the family id of the tokens.
      uuidv7(),
      hashSecret(code),
      grant.clientId,
      grant.userId,
      grant.redirectUri,
      // SQLite keeps booleans as 0/1 (as TypeORM writes them).
      dialect === 'postgres' ? grant.redirectUriInRequest : Number(grant.redirectUriInRequest),
      grant.scope,
      grant.codeChallenge,
      date(this.clock.inSeconds(this.config.codeTtlSeconds)),
      date(this.clock.now()),
    ];
    // On SQLite, in the group commit of this turn of the event loop (src/database/transactions.ts).
    await this.transactions.write((manager) => execute(manager, sql, parameters));
    return code;
  }

  /** One indexed lookup by the code's hash, as a prepared statement (the token endpoint's hot path). */
  async findByCode(code: string): Promise<AuthorizationCode | null> {
    const row = await this.byHash.one(hashSecret(code));
    if (!row) return null;
    return Object.assign(new AuthorizationCode(), row, {
      // SQLite keeps booleans as 0/1.
      redirectUriInRequest: Boolean(row.redirectUriInRequest),
      expiresAt: rowDate(row.expiresAt),
      consumedAt: rowDate(row.consumedAt),
      createdAt: rowDate(row.createdAt),
    });
  }

  /**
   * Marks the code used with one conditional UPDATE; exactly one of any number of concurrent
   * callers (on any instance) sees `true`. RFC 6749 §4.1.2: the code MUST NOT be used more than once.
   */
  async consume(codeId: string, manager: EntityManager = this.codes.manager): Promise<boolean> {
    const now = dateParameter(this.clock.now(), manager.connection.options.type);
    return (await execute(manager, 'UPDATE "authorization_codes" SET "consumed_at" = ? WHERE "id" = ? AND "consumed_at" IS NULL', [now, codeId])) === 1;
  }
}
