import { Inject, Injectable } from '@nestjs/common';
import { createHash } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { Clock } from '../common/clock.js';
import { uuidv7 } from '../common/random.js';
import { apiConfig, type ApiConfig } from '../config/api.config.js';
import type { CommitsWith } from '../database/transactions.js';
import { ApiError } from '../http/api-error.js';
import { idempotencyKeyOf } from './idempotency-key.header.js';
import { IdempotencyKeyStore } from './idempotency-key.store.js';

/** Who a key belongs to: the same key from another client, or for another person, is another key. */
export interface KeyOwner {
  clientId: string;
  userId: string;
}

const sha256 = (value: string): string => createHash('sha256').update(value, 'utf8').digest('hex');

/** Thrown inside the write's transaction when the claim was taken over meanwhile: undoes the write. */
class ClaimLost extends Error {}

/**
 * Writes made at most once per Idempotency-Key (draft-ietf-httpapi-idempotency-key-header-07): the
 * first request with a key claims it (a row the primary key decides, on any instance), runs, and
 * keeps its answer in the same transaction as its write, so the answer exists exactly when the write
 * does; a retry with the same key, client, person and request gets that answer again for
 * IDEMPOTENCY_KEY_TTL_SECONDS (§2.3). The same key with another request is 422, one still running
 * is 409 (§2.7). A request that fails writes nothing and gives the key up, so a retry runs it;
 * one whose instance died holds it until its claim runs out (IDEMPOTENCY_CLAIM_SECONDS), and a
 * write whose claim was taken over meanwhile is rolled back: two instances never both write.
 * Only successful answers are kept: the person's own data, never a credential.
 */
@Injectable()
export class IdempotentWrites {
  constructor(
    private readonly store: IdempotencyKeyStore,
    private readonly clock: Clock,
    @Inject(apiConfig.KEY) private readonly config: ApiConfig,
  ) {}

  /**
   * Runs `write` once per key and answers with `answer` of its result; a request without the
   * header just runs. `write` must pass its `commitsWith` (when given) into its own transaction.
   * The answer is kept as JSON: a replay gets it back through JSON.parse (a Date as its ISO text).
   */
  async once<T, A>(request: FastifyRequest, owner: KeyOwner, write: (commitsWith?: CommitsWith<T>) => Promise<T>, answer: (result: T) => A): Promise<A> {
    const key = idempotencyKeyOf(request.headers);
    if (key === undefined) return answer(await write());
    const keyHash = keyHashOf(owner, key);
    const claim = uuidv7();
    const now = this.clock.now();
    const outcome = await this.store.claim(
      {
        keyHash,
        fingerprint: requestFingerprint(request.method, request.url, request.headers['content-type'], request.body),
        claim,
        claimedUntil: new Date(now.getTime() + this.config.idempotencyClaimSeconds * 1000),
        expiresAt: new Date(now.getTime() + this.config.idempotencyKeyTtlSeconds * 1000),
      },
      now,
    );
    if (outcome.outcome === 'replay') return JSON.parse(outcome.response) as A;
    if (outcome.outcome === 'mismatch') throw new ApiError(422, 'This Idempotency-Key was used with another request: use a new key for a new request');
    if (outcome.outcome === 'in_flight') throw inFlight();
    let kept: A | undefined;
    try {
      await write(async (manager, result) => {
        kept = answer(result);
        if (!(await this.store.complete(keyHash, claim, JSON.stringify(kept), manager))) throw new ClaimLost();
      });
      return kept!;
    } catch (error) {
      await this.store.release(keyHash, claim);
      throw error instanceof ClaimLost ? inFlight() : error;
    }
  }
}

function inFlight(): ApiError {
  return new ApiError(409, 'A request with this Idempotency-Key is still in progress: retry it in a moment', { headers: { 'Retry-After': '1' } });
}

/** The row of `key` of one client for one person: the key is kept only inside this hash. */
export function keyHashOf(owner: KeyOwner, key: string): string {
  return sha256(JSON.stringify([owner.clientId, owner.userId, key]));
}

/**
 * What makes a retry the same request (the draft's "idempotency fingerprint", §2.4): method, target,
 * content type and the body's bytes as received (a Buffer: the data API parses JSON itself).
 */
export function requestFingerprint(method: string, url: string, contentType: string | undefined, body: unknown): string {
  const bytes = Buffer.isBuffer(body) ? body : Buffer.from(JSON.stringify(body ?? null), 'utf8');
  return createHash('sha256').update(JSON.stringify([method, url, contentType ?? null])).update('\n').update(bytes).digest('hex');
}
