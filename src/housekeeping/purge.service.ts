import { Inject, Injectable } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AuditActor } from '../audit/audit-actor.js';
import { AuditService } from '../audit/audit.service.js';
import { Clock } from '../common/clock.js';
import { housekeepingConfig, type HousekeepingConfig } from '../config/housekeeping.config.js';
import { AuthorizationCodeStore } from '../codes/authorization-code.store.js';
import { LogoutDeliveryStore } from '../logout/logout-delivery.store.js';
import { JtiUseStore } from '../replay/jti-use.store.js';
import { IdempotencyKeyStore } from '../idempotency/idempotency-key.store.js';
import { EmailLinkStore } from '../email-links/email-link.store.js';
import { InstanceStore } from '../instances/instance.store.js';
import { SEEN_WITHIN_HOURS } from '../instances/instances.service.js';
import { DeviceAuthorizationStore } from '../device-codes/device-authorization.store.js';
import { PushedRequestStore } from '../pushed-requests/pushed-request.store.js';
import { DEVICE_MEMORY_DAYS } from '../sessions/device-history.js';
import { SessionStore } from '../sessions/session.store.js';
import { MacNonceStore } from '../tokens/mac-nonce.store.js';
import { TokenStore } from '../tokens/token.store.js';

export interface PurgeResult {
  codes: number;
  tokens: number;
  /** Nonces of MAC-signed requests whose timestamp has left the accepted window. */
  macNonces: number;
  /** Sign-in sessions that ended or expired more than DEVICE_MEMORY_DAYS ago. */
  sessions: number;
  /** Back-channel logout notifications delivered or given up on more than LOGOUT_RECORD_DAYS ago. */
  logoutDeliveries: number;
  /** Pushed authorization requests (RFC 9126) that expired, used or not. */
  pushedRequests: number;
  /** Records of accepted single-use JWTs (DPoP proofs, client assertions) that could no longer be accepted anyway. */
  jtiUses: number;
  /** Idempotency-Keys of the data API past their IDEMPOTENCY_KEY_TTL_SECONDS. */
  idempotencyKeys: number;
  /** Device authorization requests (RFC 8628) that expired, whatever became of them. */
  deviceAuthorizations: number;
  /** Email links (invitations, resets, verifications) past their expiry, used or not. */
  emailLinks: number;
  /** Server instances not seen for a day: stopped without removing themselves (a crash, a killed container). */
  instances: number;
}

/** The counts under snake_case names, as the admin API answers them and the audit trail records them (the CLI prints PurgeResult's own). */
export function purgeCounts(result: PurgeResult): Record<string, number> {
  return Object.fromEntries(Object.entries(result).map(([name, count]) => [name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`), count]));
}

/** How long the record of a back-channel logout notification is kept once it has an outcome. */
export const LOGOUT_RECORD_DAYS = 7;

export interface PurgeOptions {
  /** Stops between two batches when aborted (application shutdown). */
  signal?: AbortSignal;
  /**
   * Who asked for this run over the admin API (POST /housekeeping/purge), audited with the counts
   * (`housekeeping.purged`). The scheduled runs and the CLI's `purge`, which cron runs every few
   * minutes, are not: a row each time would bury the events the log is read for.
   */
  requestedBy?: AuditActor;
}

/**
 * Deletes expired authorization codes, tokens, MAC nonces, sessions, pushed requests, single-use JWTs, device requests and instances long gone, at most PURGE_BATCH_SIZE rows per
 * statement; each table's statement is its store's purgeExpired.
 * Safe to run on every instance at once: each statement deletes whatever rows are still there and
 * match, so two instances never delete a row twice nor fail on one the other took; on PostgreSQL
 * SKIP LOCKED lets them take disjoint batches instead of queueing behind each other's locks.
 *
 * What may go, with cutoff = now − PURGE_GRACE_SECONDS (the grace covers clocks that differ
 * between instances):
 * - an authorization code whose expires_at < cutoff, consumed or not. Its id is the family id of
 *   the tokens issued from it (RFC 6749 §4.1.2, revoke on replay); a replay after the row is gone
 *   finds no code and gets invalid_grant, which is right: the code had expired anyway.
 * - an access token whose expires_at < cutoff: nothing reads an expired access token except to
 *   refuse it, and a missing one is refused the same way (RFC 6750 §3.1, RFC 7662 §2.2, RFC 7009 §2.2).
 * - a refresh token whose expires_at < cutoff, rotated (consumed) or not, whatever its family's
 *   state. A rotated refresh token is what reuse detection looks up (RFC 9700 §4.14.2): presented
 *   again, it revokes the whole family, the attacker's live branch included. It is kept for as long
 *   as it would have been usable had it not been rotated, which covers the case detection is for: a
 *   thief and the client both holding it, the second one to present it doing so within its
 *   lifetime. Once it has expired it is refused for that alone; keeping it longer would make a
 *   family that rotates for months keep every token it ever had (the soak in bench/RESULTS.md),
 *   and node-oidc-provider, too, forgets a rotated token at its expiry. What is given up: a client
 *   that comes back after more than the refresh lifetime with a rotated token gets invalid_grant
 *   without revoking a thief's branch (SECURITY.md).
 * - a MAC request nonce whose expires_at (its ts + MAC_TIMESTAMP_WINDOW_SECONDS) < cutoff: a
 *   request with that ts is refused for its timestamp anyway, so the nonce has nothing left to stop.
 *   Nonces of a purged token go with it (ON DELETE CASCADE).
 * - a sign-in session whose expires_at < cutoff − DEVICE_MEMORY_DAYS (90): ending a session pulls
 *   its expires_at back to the moment it ended, so this one condition covers the ended and the
 *   expired; either is refused already (isLive), and a missing row is refused the same way. They
 *   are kept that long for their device (issue 48): a sign-in from a device none of the person's
 *   sessions of that time had is audited as a new device, which needs those sessions; the rows
 *   hold the device's description and the address, which the audit log keeps for each sign-in anyway.
 * - a back-channel logout notification delivered or given up on (failed) more than
 *   LOGOUT_RECORD_DAYS before the cutoff: the record of what was sent is kept that long. Pending
 *   ones stay whatever their age: they are owed.
 * - a pushed authorization request whose expires_at < cutoff, used or not: a request_uri past its
 *   expiry is refused anyway, and a missing one is refused the same way.
 * - a single-use JWT record whose expires_at < cutoff: a DPoP proof past its iat +
 *   DPOP_PROOF_MAX_AGE_SECONDS, a client assertion past its exp, is refused for its age anyway,
 *   so the record has nothing left to stop.
 * - an Idempotency-Key whose expires_at < cutoff: its answer is no longer replayed (a request with
 *   that key claims it afresh), so the row has nothing left to answer.
 * - a device authorization request (RFC 8628) whose expires_at < cutoff, decided, redeemed or not:
 *   its device_code is answered expired_token until then, and a missing one invalid_grant, which
 *   is as final; the tokens it yielded are rows of their own (their family id names it).
 * - a server instance whose last heartbeat is more than SEEN_WITHIN_HOURS before the cutoff: it
 *   stopped without removing itself, and the dashboard lists only those seen within that time.
 */
@Injectable()
export class PurgeService {
  constructor(
    private readonly codes: AuthorizationCodeStore,
    private readonly tokens: TokenStore,
    private readonly macNonces: MacNonceStore,
    private readonly sessions: SessionStore,
    private readonly logoutDeliveries: LogoutDeliveryStore,
    private readonly pushedRequests: PushedRequestStore,
    private readonly jtiUses: JtiUseStore,
    private readonly idempotencyKeys: IdempotencyKeyStore,
    private readonly deviceAuthorizations: DeviceAuthorizationStore,
    private readonly emailLinks: EmailLinkStore,
    private readonly instances: InstanceStore,
    private readonly audit: AuditService,
    @Inject(housekeepingConfig.KEY) private readonly config: HousekeepingConfig,
    private readonly clock: Clock,
  ) {}

  async purge(options: PurgeOptions = {}): Promise<PurgeResult> {
    const cutoff = new Date(this.clock.now().getTime() - this.config.graceSeconds * 1000);
    const codes = await this.deleteInBatches((limit) => this.codes.purgeExpired(cutoff, limit), options);
    const tokens = await this.deleteInBatches((limit) => this.tokens.purgeExpired(cutoff, limit), options);
    const macNonces = await this.deleteInBatches((limit) => this.macNonces.purgeExpired(cutoff, limit), options);
    const sessionsCutoff = new Date(cutoff.getTime() - DEVICE_MEMORY_DAYS * 24 * 3600 * 1000);
    const sessions = await this.deleteInBatches((limit) => this.sessions.purgeExpired(sessionsCutoff, limit), options);
    const recordsCutoff = new Date(cutoff.getTime() - LOGOUT_RECORD_DAYS * 86_400_000);
    const logoutDeliveries = await this.deleteInBatches((limit) => this.logoutDeliveries.purgeFinished(recordsCutoff, limit), options);
    const pushedRequests = await this.deleteInBatches((limit) => this.pushedRequests.purgeExpired(cutoff, limit), options);
    const jtiUses = await this.deleteInBatches((limit) => this.jtiUses.purgeExpired(cutoff, limit), options);
    const idempotencyKeys = await this.deleteInBatches((limit) => this.idempotencyKeys.purgeExpired(cutoff, limit), options);
    const deviceAuthorizations = await this.deleteInBatches((limit) => this.deviceAuthorizations.purgeExpired(cutoff, limit), options);
    const emailLinks = await this.deleteInBatches((limit) => this.emailLinks.purgeExpired(cutoff, limit), options);
    const unseenCutoff = new Date(cutoff.getTime() - SEEN_WITHIN_HOURS * 3_600_000);
    const instances = await this.deleteInBatches((limit) => this.instances.purgeUnseen(unseenCutoff, limit), options);
    const result = { codes, tokens, macNonces, sessions, logoutDeliveries, pushedRequests, jtiUses, idempotencyKeys, deviceAuthorizations, emailLinks, instances };
    if (options.requestedBy !== undefined) await this.audit.record({ actor: options.requestedBy, action: 'housekeeping.purged', subject: 'housekeeping:purge', details: purgeCounts(result) });
    return result;
  }

  /** Runs one store's bounded DELETE until a batch comes back short, the per-run cap is reached or the run is aborted. */
  private async deleteInBatches(deleteBatch: (limit: number) => Promise<number>, options: PurgeOptions): Promise<number> {
    const { batchSize, maxBatches, batchPauseMs } = this.config;
    let deleted = 0;
    for (let batch = 0; batch < maxBatches && !options.signal?.aborted; batch++) {
      if (batch > 0) await sleep(batchPauseMs);
      const affected = await deleteBatch(batchSize);
      deleted += affected;
      if (affected < batchSize) break;
    }
    return deleted;
  }
}
