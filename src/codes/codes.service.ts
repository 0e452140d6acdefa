import { Inject, Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import { IsNull, type EntityManager, type Repository } from 'typeorm';
import { Clock } from '../common/clock.js';
import { generateSecret, hashSecret, SECRET_PREFIX } from '../common/secrets.js';
import { oauthConfig, type OAuthConfig } from '../config/oauth.config.js';
import { AuthorizationCode } from './authorization-code.entity.js';

export interface CodeGrant {
  clientId: string;
  userId: string;
  redirectUri: string;
  redirectUriInRequest: boolean;
  scope: string;
  codeChallenge: string | null;
}

@Injectable()
export class CodesService {
  constructor(
    @InjectRepository(AuthorizationCode) private readonly codes: Repository<AuthorizationCode>,
    @Inject(oauthConfig.KEY) private readonly config: OAuthConfig,
    private readonly clock: Clock,
  ) {}

  /** Issues a code for an approved authorization request; returns the code, of which only the hash is kept. */
  async issue(grant: CodeGrant): Promise<string> {
    const code = generateSecret(SECRET_PREFIX.authorizationCode);
    await this.codes.insert({
      id: randomUUID(),
      codeHash: hashSecret(code),
      ...grant,
      expiresAt: this.clock.inSeconds(this.config.codeTtlSeconds),
      consumedAt: null,
    });
    return code;
  }

  findByCode(code: string): Promise<AuthorizationCode | null> {
    return this.codes.findOneBy({ codeHash: hashSecret(code) });
  }

  /**
   * Marks the code used with one conditional UPDATE; exactly one of any number of concurrent
   * callers (on any instance) sees `true`. RFC 6749 §4.1.2: the code MUST NOT be used more than once.
   */
  async consume(codeId: string, manager: EntityManager = this.codes.manager): Promise<boolean> {
    const result = await manager.update(AuthorizationCode, { id: codeId, consumedAt: IsNull() }, { consumedAt: this.clock.now() });
    return result.affected === 1;
  }
}
