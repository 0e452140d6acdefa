import { Inject, Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { uuidv7 } from '../common/random.js';
import { Clock } from '../common/clock.js';
import { generateSecret, hashSecret, SECRET_PREFIX } from '../common/secrets.js';
import { parConfig, type ParConfig } from '../config/par.config.js';
import { PushedRequestStore } from './pushed-request.store.js';

/** RFC 9126 §2.2: the URN namespace of request_uri values (RFC 9101 §A.1 registers it). */
export const REQUEST_URI_PREFIX = 'urn:ietf:params:oauth:request_uri:';

/** A pushed request as /authorize uses it. */
export interface PushedRequest {
  id: string;
  parameters: Record<string, string | string[]>;
}

/** Why a request_uri cannot be used; the authorization endpoint shows it (RFC 9101 §6.2 invalid_request_uri). */
export class PushedRequestUnusable extends Error {}

/**
 * Pushed authorization requests (RFC 9126): stored at /par, found by their request_uri at /authorize.
 * - A request_uri names one client's request (§4: the client_id must match) and lives
 *   PAR_REQUEST_TTL_SECONDS (60 s by default) until a browser brings it.
 * - Its first arrival at /authorize opens it for PAR_INTERACTION_SECONDS, so that a person who
 *   takes a while to sign in is not sent back; §4 allows the reloads this implies.
 * - It yields one authorization response: consume() runs in the transaction that writes the code.
 */
@Injectable()
export class PushedRequests {
  constructor(
    private readonly store: PushedRequestStore,
    private readonly clock: Clock,
    @Inject(parConfig.KEY) private readonly config: ParConfig,
  ) {}

  /** Stores a validated request; returns its request_uri and lifetime (§2.2). */
  async push(clientId: string, parameters: Record<string, string | string[]>): Promise<{ requestUri: string; expiresIn: number }> {
    const reference = generateSecret(SECRET_PREFIX.pushedRequest);
    await this.store.insert({
      id: uuidv7(),
      referenceHash: hashSecret(reference),
      clientId,
      parameters,
      expiresAt: this.clock.inSeconds(this.config.requestTtlSeconds),
      createdAt: this.clock.now(),
    });
    return { requestUri: REQUEST_URI_PREFIX + reference, expiresIn: this.config.requestTtlSeconds };
  }

  /** The pushed request a request_uri names for this client, opened for the sign-in window; throws PushedRequestUnusable. */
  async resolve(requestUri: string, clientId: string): Promise<PushedRequest> {
    const reference = requestUri.startsWith(REQUEST_URI_PREFIX) ? requestUri.slice(REQUEST_URI_PREFIX.length) : '';
    const row = reference.startsWith(SECRET_PREFIX.pushedRequest) ? await this.store.findByReferenceHash(hashSecret(reference)) : null;
    // The same answer for unknown and foreign request_uris: a client learns nothing about another's.
    if (!row || row.clientId !== clientId) throw new PushedRequestUnusable('The request_uri is unknown or was not issued to this application.');
    const now = this.clock.now();
    if (row.usedAt !== null) throw new PushedRequestUnusable('This request_uri has been used already.');
    if (row.expiresAt.getTime() <= now.getTime()) throw new PushedRequestUnusable('This request_uri has expired.');
    if (row.openedAt === null && !(await this.store.open(row.id, now, this.clock.inSeconds(this.config.interactionSeconds)))) {
      // Another request opened, used or outlived it between the read and the UPDATE: read it again.
      const again = await this.store.findByReferenceHash(row.referenceHash);
      if (!again || again.usedAt !== null || again.expiresAt.getTime() <= now.getTime()) throw new PushedRequestUnusable('This request_uri has been used already or has expired.');
    }
    return { id: row.id, parameters: row.parameters };
  }

  /** Marks the request used, in the caller's transaction; false when another response used it first, or it expired. */
  consume(id: string, manager: EntityManager): Promise<boolean> {
    return this.store.consume(id, this.clock.now(), manager);
  }
}
