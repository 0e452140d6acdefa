import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import { Clock } from '../common/clock.js';
import { generateSecret, hashSecret, SECRET_PREFIX } from '../common/secrets.js';
import { sessionConfig, type SessionConfig } from '../config/session.config.js';
import type { KeysetPage } from '../database/keyset-page.js';
import type { User } from '../users/user.entity.js';
import type { SessionClient } from './session-client.entity.js';
import type { Session } from './session.entity.js';
import type { DeviceHistory } from './device-history.js';
import { SessionSearchStore, type LiveSessionFilter, type LiveSessionPosition, type SessionWithPerson } from './session-search.store.js';
import { publicSessionId } from './session-id.js';
import { SessionStore } from './session.store.js';

/** Where a session was started from: the client's address (request.ip) and its device's description (describeDevice). */
export interface SessionOrigin {
  ip: string | null;
  device: string;
}

/**
 * Server-side sign-in sessions. Everything here is on the pages' path (login, consent, account);
 * the token endpoint and the data API never look at a session. The rows live in the shared
 * database, so a session ended on one instance is ended on all of them at once.
 */
@Injectable()
export class SessionsService {
  constructor(
    private readonly store: SessionStore,
    private readonly search: SessionSearchStore,
    private readonly clock: Clock,
    @Inject(sessionConfig.KEY) private readonly config: SessionConfig,
  ) {}

  /**
   * Starts a session for the user, from `origin` (the address and the device's description, shown
   * on the account page and to administrators); returns the secret for the cookie (only its hash is
   * stored), or null when the person is deactivated (issue 46: the store's INSERT is gated on it).
   * `alsoWithin` runs in the session's transaction, only when one started (the sign-in's audit
   * events), told whether the device is new to the person (device-history.ts).
   */
  async start(userId: string, origin: SessionOrigin, alsoWithin?: (manager: EntityManager, devices: DeviceHistory) => Promise<void>): Promise<{ secret: string; createdAt: Date } | null> {
    const secret = generateSecret(SECRET_PREFIX.session);
    const createdAt = this.clock.now();
    const expiresAt = new Date(createdAt.getTime() + this.config.ttlSeconds * 1000);
    const row: Session = { id: hashSecret(secret), userId, publicId: randomUUID(), createdAt, expiresAt, endedAt: null, ip: origin.ip, device: origin.device };
    return (await this.store.insert(row, alsoWithin)) !== null ? { secret, createdAt } : null;
  }

  /** Whether the cookie's secret names a session of this user that has neither ended nor expired. */
  async isActive(secret: string, userId: string): Promise<boolean> {
    return this.store.isLive(hashSecret(secret), userId, this.clock.now());
  }

  /** Ends one session (sign-out). Ending an ended or unknown session changes nothing. */
  async end(secret: string): Promise<void> {
    await this.store.end(hashSecret(secret), this.clock.now());
  }

  /** Ends these sessions, named by their rows (an upstream identity provider's back-channel logout found them); returns how many were live. */
  async endRows(ids: readonly string[]): Promise<number> {
    return ids.length === 0 ? 0 : this.store.endRows(ids, this.clock.now());
  }

  /**
   * Ends every session of the user (a password change), or every one but the caller's ("sign out
   * everywhere else"), named by its cookie secret (`except`) or its row (`exceptRow`). Given a
   * manager, it runs inside that transaction, so that a new password and the end of the sessions
   * the old one opened commit together. Returns how many ended.
   */
  async endAllOf(userId: string, options: { except?: string; exceptRow?: string; manager?: EntityManager } = {}): Promise<number> {
    const exceptId = options.except === undefined ? options.exceptRow : hashSecret(options.except);
    return this.store.endAllOf(userId, this.clock.now(), { exceptId, manager: options.manager });
  }

  /**
   * Records that a client signed the person in through the session named by this cookie secret
   * (for back-channel logout); returns the session's public sid. `recorded`: whether the pair is
   * there already, when the caller read it (undefined: the store looks).
   */
  async recordClient(secret: string, clientId: string, recorded?: boolean): Promise<string> {
    const id = hashSecret(secret);
    await this.store.recordClient(id, clientId, this.clock.now(), recorded);
    return publicSessionId(id);
  }

  /** The sessions row named by this cookie secret: its SHA-256 (the row holds no secret). */
  rowId(secret: string): string {
    return hashSecret(secret);
  }

  /** The public `sid` of the session named by this cookie secret (ID tokens, logout tokens). */
  publicId(secret: string): string {
    return publicSessionId(hashSecret(secret));
  }

  /**
   * One page of the person's live sessions, newest first, with the clients that signed them in
   * through each (the admin API, issue 48). `after`: the last session of the previous page.
   */
  async livePageOf(userId: string, limit: number, after: { createdAt: Date; publicId: string } | null): Promise<{ session: Session; clients: SessionClient[] }[]> {
    const sessions = await this.store.livePageOf(userId, this.clock.now(), limit, after);
    const clients = await this.store.clientsOf(sessions.map((session) => session.id));
    return sessions.map((session) => ({ session, clients: clients.filter((client) => client.sessionId === session.id) }));
  }

  /**
   * One page of every person's live sessions matching `filter`, newest first, each with its person
   * and the clients that signed them in through it (the admin API's list, issue 48).
   */
  async livePage(filter: LiveSessionFilter, limit: number, after: LiveSessionPosition | null): Promise<{ session: SessionWithPerson; clients: SessionClient[] }[]> {
    const sessions = await this.search.page(filter, this.clock.now(), limit, after);
    const clients = await this.store.clientsOf(sessions.map((session) => session.id));
    return sessions.map((session) => ({ session, clients: clients.filter((client) => client.sessionId === session.id) }));
  }

  /** The id of the person whose live session has this public id (the name the admin API lists), or undefined. */
  ownerOfLive(publicId: string): Promise<string | undefined> {
    return this.search.ownerOfLive(publicId, this.clock.now());
  }

  /**
   * Ends the person's live session named `publicId` (an administrator, by the name the admin API
   * lists), in the caller's transaction: the end listeners run as for a sign-out (back-channel
   * logout). False when no live session of theirs has that name.
   */
  async endByPublicId(userId: string, publicId: string, manager: EntityManager): Promise<boolean> {
    return (await this.store.endLiveByPublicId(userId, publicId, this.clock.now(), manager)) > 0;
  }

  /** A page of the live sessions the client signed people in through, newest first, with their people (the admin API). */
  liveWithClient(clientId: string, page: KeysetPage): Promise<(SessionClient & { session: Session & { user: User } })[]> {
    return this.store.liveWithClient(clientId, this.clock.now(), page);
  }

  countLiveWithClient(clientId: string): Promise<number> {
    return this.store.countLiveWithClient(clientId, this.clock.now());
  }
}
