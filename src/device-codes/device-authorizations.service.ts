import { Inject, Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { Clock } from '../common/clock.js';
import { uuidv7 } from '../common/random.js';
import { generateSecret, hashSecret, SECRET_PREFIX } from '../common/secrets.js';
import { deviceConfig, type DeviceConfig } from '../config/device.config.js';
import { isUniqueViolation } from '../database/unique-violation.js';
import type { Gate } from '../database/gate.js';
import { DeviceAuthorizationStatus, type DeviceAuthorization } from './device-authorization.entity.js';
import { DeviceAuthorizationStore, type DeviceDecision } from './device-authorization.store.js';
import { generateUserCode, normalizeUserCode, userCodeHash } from './user-code.js';

/** RFC 8628 §3.2: what the device is told, its codes shown here once and kept only as hashes. */
export interface StartedDeviceAuthorization {
  deviceCode: string;
  userCode: string;
  expiresIn: number;
  interval: number;
}

/** Where a device's poll stands (RFC 8628 §3.5); `approved` may be redeemed through `redeemGate`. */
export type DevicePoll =
  | { kind: 'unknown' }
  | { kind: 'expired' }
  | { kind: 'denied' }
  | { kind: 'redeemed' }
  | { kind: 'pending' }
  | { kind: 'slow_down' }
  | { kind: 'approved'; authorization: DeviceAuthorization };

/** A user code that collides with one already stored is drawn again, a few times at most. */
const USER_CODE_ATTEMPTS = 3;

/**
 * Device authorization requests (RFC 8628): started by a device, decided by a person at the
 * verification page, polled for and redeemed once by the device. Every state change is one
 * conditional UPDATE in DeviceAuthorizationStore, so any number of instances agree.
 */
@Injectable()
export class DeviceAuthorizations {
  constructor(
    private readonly store: DeviceAuthorizationStore,
    private readonly clock: Clock,
    @Inject(deviceConfig.KEY) private readonly config: DeviceConfig,
  ) {}

  /** §3.2: a new request of `clientId` for `scope`; only the hashes of its codes are stored. */
  async start(clientId: string, scope: string): Promise<StartedDeviceAuthorization> {
    const deviceCode = generateSecret(SECRET_PREFIX.deviceCode);
    for (let attempt = 1; ; attempt++) {
      const userCode = generateUserCode();
      const now = this.clock.now();
      try {
        await this.store.insert({
          id: uuidv7(),
          deviceCodeHash: hashSecret(deviceCode),
          userCodeHash: userCodeHash(normalizeUserCode(userCode)!),
          clientId,
          scope,
          intervalSeconds: this.config.intervalSeconds,
          expiresAt: new Date(now.getTime() + this.config.ttlSeconds * 1000),
          createdAt: now,
        });
        return { deviceCode, userCode, expiresIn: this.config.ttlSeconds, interval: this.config.intervalSeconds };
      } catch (error) {
        if (attempt >= USER_CODE_ATTEMPTS || !isUniqueViolation(error)) throw error;
      }
    }
  }

  /** The pending request a typed user code names, or null (unknown, malformed, decided or expired). */
  async pendingByUserCode(typed: string): Promise<DeviceAuthorization | null> {
    const normalized = normalizeUserCode(typed);
    return normalized === undefined ? null : this.store.findPendingByUserCodeHash(userCodeHash(normalized), this.clock.now());
  }

  /** The person's answer, once: false when the request was decided already or has expired meanwhile. */
  decide(id: string, decision: DeviceDecision, manager: EntityManager): Promise<boolean> {
    return this.store.decide(id, decision, this.clock.now(), manager);
  }

  /**
   * §3.4, §3.5: where the device's request stands. A pending request polled sooner than its
   * interval after the last poll is told to slow down, and its interval grows by 5 s; the time of
   * the last poll is in the database, so a device spreading its polls over instances is seen too.
   */
  async poll(deviceCode: string, clientId: string): Promise<DevicePoll> {
    const authorization = await this.store.findByDeviceCodeHash(hashSecret(deviceCode));
    // A device_code of another client is as unknown to this one as a made-up one.
    if (!authorization || authorization.clientId !== clientId) return { kind: 'unknown' };
    if (authorization.status === DeviceAuthorizationStatus.Redeemed) return { kind: 'redeemed' };
    const now = this.clock.now();
    if (authorization.expiresAt.getTime() <= now.getTime()) return { kind: 'expired' };
    switch (authorization.status) {
      case DeviceAuthorizationStatus.Denied:
        return { kind: 'denied' };
      case DeviceAuthorizationStatus.Approved:
        return { kind: 'approved', authorization };
      case DeviceAuthorizationStatus.Pending:
        if (await this.store.pollOnTime(authorization.id, authorization.intervalSeconds, now)) return { kind: 'pending' };
        await this.store.slowDown(authorization.id, now);
        return { kind: 'slow_down' };
    }
  }

  /** The conditional UPDATE that redeems an approved request once (§3.5: the device_code is then spent), for TokensService.storeAfter. */
  redeemGate(id: string): Gate {
    return this.store.redeemGate(id, this.clock.now());
  }
}
