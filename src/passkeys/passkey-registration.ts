import { Inject, Injectable } from '@nestjs/common';
import { generateRegistrationOptions, verifyRegistrationResponse, type PublicKeyCredentialCreationOptionsJSON, type RegistrationResponseJSON } from '@simplewebauthn/server';
import type { FastifyRequest } from 'fastify';
import { AuditService } from '../audit/audit.service.js';
import { Clock } from '../common/clock.js';
import { uuidv7 } from '../common/random.js';
import { passkeyConfig, type PasskeyConfig } from '../config/passkey.config.js';
import type { User } from '../users/user.entity.js';
import { CEREMONY } from './passkey-challenge.entity.js';
import { PasskeyChallenges } from './passkey-challenges.js';
import { PasskeyStore } from '../factors/passkey.store.js';

/** The longest name a person may give a passkey (the column's length). */
export const PASSKEY_NAME_MAX = 64;

export type RegistrationOutcome = { added: true; backupEligible: boolean } | { added: false; reason: string };

/** The WebAuthn user handle of a person (§14.6.1: no personal information): the bytes of their opaque id. */
export function userHandleOf(userId: string): Uint8Array<ArrayBuffer> {
  return new TextEncoder().encode(userId);
}

/** A person adds a passkey from the account page (WebAuthn Level 3 §7.1, registering a new credential). */
@Injectable()
export class PasskeyRegistration {
  constructor(
    private readonly store: PasskeyStore,
    private readonly challenges: PasskeyChallenges,
    private readonly audit: AuditService,
    private readonly clock: Clock,
    @Inject(passkeyConfig.KEY) private readonly config: PasskeyConfig,
  ) {}

  /** The options for navigator.credentials.create(): a discoverable credential, verified user, none of the person's existing ones again. */
  async options(request: FastifyRequest, user: User, rpId: string): Promise<PublicKeyCredentialCreationOptionsJSON> {
    const existing = await this.store.listFor(user.id);
    const options = await generateRegistrationOptions({
      rpName: this.config.rpName,
      rpID: rpId,
      userName: user.username,
      userID: userHandleOf(user.id),
      userDisplayName: user.name ?? user.username,
      timeout: this.config.ceremonySeconds * 1000,
      // Who made the authenticator is not asked: any passkey the person's device offers will do.
      attestationType: 'none',
      excludeCredentials: existing.map((p) => ({ id: p.credentialId, transports: p.transports })),
      // Discoverable (sign-in without a username) and user-verifying (a PIN or biometric: the second factor).
      authenticatorSelection: { residentKey: 'required', requireResidentKey: true, userVerification: 'required' },
    });
    await this.challenges.issue(request, CEREMONY.registration, options.challenge, user.id);
    return options;
  }

  /**
   * §7.1's checks (through @simplewebauthn/server): the challenge this browser was given for this
   * person, used once; type webauthn.create; the issuer's origin exactly; the RP ID's hash; UP and
   * UV set (a credential created without user verification is not registered); a supported key.
   */
  async verify(request: FastifyRequest, user: User, rpId: string, name: string, response: unknown): Promise<RegistrationOutcome> {
    const issued = await this.challenges.take(request, CEREMONY.registration);
    if (!issued || issued.userId !== user.id) return { added: false, reason: 'This request has expired. Please try again.' };
    let verification;
    try {
      verification = await verifyRegistrationResponse({
        response: response as RegistrationResponseJSON,
        expectedChallenge: issued.challenge,
        expectedOrigin: this.config.origin,
        expectedRPID: rpId,
        requireUserVerification: true,
      });
    } catch {
      return { added: false, reason: 'The passkey could not be verified.' };
    }
    const info = verification.registrationInfo;
    if (!verification.verified || !info || !info.userVerified) return { added: false, reason: 'The passkey could not be verified.' };
    if (await this.store.findByCredentialId(info.credential.id)) return { added: false, reason: 'This passkey is already registered.' };
    const id = uuidv7();
    const inserted = this.store.insert({
      id,
      userId: user.id,
      credentialId: info.credential.id,
      publicKey: Buffer.from(info.credential.publicKey).toString('base64url'),
      counter: info.credential.counter,
      transports: info.credential.transports ?? [],
      backupEligible: info.credentialDeviceType === 'multiDevice',
      backedUp: info.credentialBackedUp,
      name,
      createdAt: this.clock.now(),
      lastUsedAt: null,
    });
    // Two registrations of one credential racing: the unique credential_id index lets one in (WebAuthn §7.1 step 26).
    if (!(await inserted.then(() => true, () => false))) return { added: false, reason: 'This passkey is already registered.' };
    await this.audit.record({ actor: `user:${user.id}`, action: 'passkey.added', subject: `user:${user.id}`, details: { passkey: id, name, synced: info.credentialDeviceType === 'multiDevice' } });
    return { added: true, backupEligible: info.credentialDeviceType === 'multiDevice' };
  }
}
