import { Inject, Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { IsNull, MoreThanOrEqual, Not, type EntityManager, type Repository } from 'typeorm';
import { Clock } from '../common/clock.js';
import { generateSecret, hashSecret, SECRET_PREFIX } from '../common/secrets.js';
import { sessionConfig, type SessionConfig } from '../config/session.config.js';
import { Transactions } from '../database/transactions.js';
import { Session } from './session.entity.js';

/**
 * Server-side sign-in sessions. Everything here is on the pages' path (login, consent, account);
 * the token endpoint and the data API never look at a session. The rows live in the shared
 * database, so a session ended on one instance is ended on all of them at once.
 */
@Injectable()
export class SessionsService {
  constructor(
    @InjectRepository(Session) private readonly sessions: Repository<Session>,
    private readonly transactions: Transactions,
    private readonly clock: Clock,
    @Inject(sessionConfig.KEY) private readonly config: SessionConfig,
  ) {}

  /** Starts a session for the user; returns the secret for the cookie (only its hash is stored). */
  async start(userId: string): Promise<{ secret: string; createdAt: Date }> {
    const secret = generateSecret(SECRET_PREFIX.session);
    const createdAt = this.clock.now();
    const row: Session = { id: hashSecret(secret), userId, createdAt, expiresAt: new Date(createdAt.getTime() + this.config.ttlSeconds * 1000), endedAt: null };
    await this.transactions.write((manager) => manager.insert(Session, row));
    return { secret, createdAt };
  }

  /** Whether the cookie's secret names a session of this user that has neither ended nor expired. */
  async isActive(secret: string, userId: string): Promise<boolean> {
    const found = await this.sessions.countBy({ id: hashSecret(secret), userId, endedAt: IsNull(), expiresAt: MoreThanOrEqual(this.clock.now()) });
    return found === 1;
  }

  /** Ends one session (sign-out). Ending an ended or unknown session changes nothing. */
  async end(secret: string): Promise<void> {
    const now = this.clock.now();
    await this.transactions.write((manager) => manager.update(Session, { id: hashSecret(secret), endedAt: IsNull() }, { endedAt: now, expiresAt: now }));
  }

  /**
   * Ends every session of the user (a password change), or every one but the caller's ("sign out
   * everywhere else"). Given a manager, it runs inside that transaction, so that a new password and
   * the end of the sessions the old one opened commit together. Returns how many ended.
   */
  async endAllOf(userId: string, options: { except?: string; manager?: EntityManager } = {}): Promise<number> {
    const now = this.clock.now();
    const keep = options.except === undefined ? {} : { id: Not(hashSecret(options.except)) };
    const work = (manager: EntityManager) => manager.update(Session, { userId, endedAt: IsNull(), ...keep }, { endedAt: now, expiresAt: now });
    const result = options.manager ? await work(options.manager) : await this.transactions.write(work);
    return result.affected ?? 0;
  }

  /** How many sessions of the user are live, the caller's included. */
  countActive(userId: string): Promise<number> {
    return this.sessions.countBy({ userId, endedAt: IsNull(), expiresAt: MoreThanOrEqual(this.clock.now()) });
  }
}
