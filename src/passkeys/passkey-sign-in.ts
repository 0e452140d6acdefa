import { Inject, Injectable } from '@nestjs/common';
import { generateAuthenticationOptions, verifyAuthenticationResponse, type AuthenticationResponseJSON, type AuthenticatorTransport, type PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/server';
import type { FastifyRequest } from 'fastify';
import { AuditService } from '../audit/audit.service.js';
import { Clock } from '../common/clock.js';
import { passkeyConfig, type PasskeyConfig } from '../config/passkey.config.js';
import { clientAddress } from '../rate-limit/client-address.js';
import { LoginThrottle } from '../rate-limit/login-throttle.service.js';
import { LoginSession, type AuthenticationMethod } from '../auth/interaction/login-session.js';
import { UsersService } from '../users/users.service.js';
import { ClonedPasskeys } from './cloned-passkeys.js';
import { CEREMONY } from './passkey-challenge.entity.js';
import { PasskeyChallenges } from './passkey-challenges.js';
import type { Passkey } from '../factors/passkey.entity.js';
import { PasskeyStore } from '../factors/passkey.store.js';
import { userHandleOf } from './passkey-registration.js';

/**
 * The name passkey sign-ins count their failures under in LoginThrottle, beside each address's own
 * counter shared with passwords (no username names the person before the passkey does). A NUL
 * cannot be in a username, so it never meets a person's password counter.
 */
const THROTTLE_NAME = '\u0000passkey';

/** `blockedSince`: the signature held, but a copy of this passkey was detected then (ClonedPasskeys). */
export type SignInOutcome = { signedIn: true } | { signedIn: false; retryAfterSeconds?: number; blockedSince?: Date };

/** What §7.2's checks found: the passkey when they all pass, a block, or nothing to say. */
type Checked = Passkey | { blockedSince: Date } | null;

/**
 * How a passkey sign-in proved who the person is (RFC 8176 §2): a key held by an authenticator,
 * `hwk` when it cannot leave that device, `swk` when the credential is backup eligible (a synced
 * passkey, copied to other devices by the platform's sync: a key in software, as far as we can
 * tell); `user` because user verification is required; `mfa` because that is possession and a
 * PIN or biometric together.
 */
export function passkeyMethods(passkey: Pick<Passkey, 'backupEligible'>): AuthenticationMethod[] {
  return [passkey.backupEligible ? 'swk' : 'hwk', 'user', 'mfa'];
}

/** "Sign in with a passkey" (WebAuthn Level 3 §7.2, verifying an authentication assertion), with a discoverable credential. */
@Injectable()
export class PasskeySignIn {
  constructor(
    private readonly store: PasskeyStore,
    private readonly challenges: PasskeyChallenges,
    private readonly users: UsersService,
    private readonly session: LoginSession,
    private readonly throttle: LoginThrottle,
    private readonly audit: AuditService,
    private readonly cloned: ClonedPasskeys,
    private readonly clock: Clock,
    @Inject(passkeyConfig.KEY) private readonly config: PasskeyConfig,
  ) {}

  /** The options for navigator.credentials.get(): no allowCredentials, so the authenticator offers the person's discoverable passkeys. */
  async options(request: FastifyRequest, rpId: string): Promise<PublicKeyCredentialRequestOptionsJSON> {
    const options = await generateAuthenticationOptions({ rpID: rpId, userVerification: 'required', timeout: this.config.ceremonySeconds * 1000, allowCredentials: [] });
    await this.challenges.issue(request, CEREMONY.authentication, options.challenge, null);
    return options;
  }

  /** Verifies the assertion and starts the person's session; every refusal counts as a failed sign-in. */
  async verify(request: FastifyRequest, rpId: string, response: unknown): Promise<SignInOutcome> {
    const address = clientAddress(request);
    const wait = await this.throttle.begin(address, THROTTLE_NAME);
    if (wait > 0) return { signedIn: false, retryAfterSeconds: wait };
    const checked = await this.check(request, rpId, response);
    if (checked && 'blockedSince' in checked) return { signedIn: false, blockedSince: checked.blockedSince };
    const passkey = checked;
    const user = passkey ? await this.users.findById(passkey.userId) : null;
    // A deactivated person (issue 46) is refused like an unknown passkey.
    if (!passkey || !user?.active) return { signedIn: false };
    await this.throttle.succeeded(address, THROTTLE_NAME);
    if (!(await this.session.logIn(request, user, passkeyMethods(passkey)))) return { signedIn: false };
    await this.audit.record({ actor: `user:${user.id}`, action: 'passkey.signed_in', subject: `user:${user.id}`, details: { passkey: passkey.id } });
    return { signedIn: true };
  }

  /** §7.2's checks; the passkey when they all pass. */
  private async check(request: FastifyRequest, rpId: string, response: unknown): Promise<Checked> {
    // The challenge is used up first, whatever follows: a response is answered once (§13.4.3).
    const issued = await this.challenges.take(request, CEREMONY.authentication);
    const assertion = response as AuthenticationResponseJSON | null;
    if (!issued || typeof assertion?.id !== 'string') return null;
    const passkey = await this.store.findByCredentialId(assertion.id);
    if (!passkey) return null;
    // §7.2 step 6: the user handle the authenticator returns names the passkey's owner.
    const userHandle = assertion.response?.userHandle;
    if (userHandle !== undefined && userHandle !== Buffer.from(userHandleOf(passkey.userId)).toString('base64url')) return null;
    let verification;
    try {
      verification = await verifyAuthenticationResponse({
        response: assertion,
        expectedChallenge: issued.challenge,
        expectedOrigin: this.config.origin,
        expectedRPID: rpId,
        // The counter is compared below, after the signature, so that a regression is recorded.
        credential: { id: passkey.credentialId, publicKey: Buffer.from(passkey.publicKey, 'base64url'), counter: 0, transports: passkey.transports as AuthenticatorTransport[] },
        requireUserVerification: true,
      });
    } catch (error) {
      // A known passkey's proof that does not hold (another origin: phishing; a bad signature; no UV): recorded, without the response.
      await this.recordRefusal(passkey, error instanceof Error ? error.message : 'unverifiable');
      return null;
    }
    if (!verification.verified || !verification.authenticationInfo.userVerified) {
      await this.recordRefusal(passkey, 'not verified');
      return null;
    }
    const { newCounter, credentialBackedUp } = verification.authenticationInfo;
    // Blocked since a copy was detected: refused whatever the counter (the copy's climbs with each
    // try). Said only now, after a valid signature: to whoever holds the key, not to a guesser.
    if (passkey.clonedAt) {
      await this.cloned.refused(passkey, passkey.clonedAt, newCounter);
      return { blockedSince: passkey.clonedAt };
    }
    // §6.1.1 and §7.2 step 21: a counter that does not grow, when either is non-zero, means two
    // authenticators hold this key (a cloned authenticator): the key is blocked for both.
    if ((newCounter > 0 || passkey.counter > 0) && newCounter <= passkey.counter) return this.blocked(passkey, newCounter);
    // The UPDATE holds only if no other sign-in moved the counter meanwhile (two uses racing is a
    // clone too) and no detection blocked the passkey since it was read.
    if (!(await this.store.recordUse(passkey.id, passkey.counter, { counter: newCounter, backedUp: credentialBackedUp, at: this.clock.now() }))) {
      return this.blocked(passkey, newCounter);
    }
    return passkey;
  }

  private async blocked(passkey: Passkey, presentedCounter: number): Promise<Checked> {
    const since = await this.cloned.block(passkey, presentedCounter);
    return since ? { blockedSince: since } : null;
  }

  private recordRefusal(passkey: Passkey, reason: string): Promise<void> {
    return this.audit.record({ actor: `user:${passkey.userId}`, action: 'passkey.sign_in_refused', subject: `user:${passkey.userId}`, details: { passkey: passkey.id, reason: reason.slice(0, 200) } });
  }
}
