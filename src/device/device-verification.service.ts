import { Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { AuditService } from '../audit/audit.service.js';
import type { InteractionOutcome } from '../auth/interaction/interaction-responder.js';
import { LoginSession } from '../auth/interaction/login-session.js';
import { Pages } from '../auth/interaction/pages.js';
import type { Client } from '../clients/client.entity.js';
import { ClientsService } from '../clients/clients.service.js';
import { formatAmr } from '../common/authentication-context.js';
import { splitScope } from '../common/scope.js';
import { ConsentsService } from '../consents/consents.service.js';
import { Transactions } from '../database/transactions.js';
import { DeviceAuthorizationStatus, type DeviceAuthorization } from '../device-codes/device-authorization.entity.js';
import { DeviceAuthorizations } from '../device-codes/device-authorizations.service.js';
import { displayUserCode, normalizeUserCode } from '../device-codes/user-code.js';
import { holdsOpenId } from '../openid/openid-scope.js';
import { clientAddress } from '../rate-limit/client-address.js';
import { LoginThrottle } from '../rate-limit/login-throttle.service.js';
import { DevicePages, DEVICE_ROUTES } from './device-pages.js';
import { DeviceSignInLevel } from './device-sign-in-level.js';

export interface DeviceForm {
  csrf_token?: unknown;
  user_code?: unknown;
  decision?: unknown;
}

/** A pending request found by the code the person typed, with its client, or the page to show instead. */
type Found = { kind: 'found'; authorization: DeviceAuthorization; client: Client; userCode: string } | { kind: 'page'; outcome: InteractionOutcome };

/**
 * The verification page (RFC 8628 §3.3): the person signs in (the same sign-in, second factor and
 * sessions as the code flow), types or confirms the code their device shows, sees the consent page
 * and allows or denies. Every form is checked again from scratch: the CSRF token, the session,
 * the sign-in level, and the code, whose wrong guesses are throttled (§5.1).
 */
@Injectable()
export class DeviceVerification {
  constructor(
    private readonly session: LoginSession,
    private readonly pages: Pages,
    private readonly devicePages: DevicePages,
    private readonly devices: DeviceAuthorizations,
    private readonly clients: ClientsService,
    private readonly consents: ConsentsService,
    private readonly throttle: LoginThrottle,
    private readonly level: DeviceSignInLevel,
    private readonly transactions: Transactions,
    private readonly audit: AuditService,
  ) {}

  /** GET /device: sign in first; then the code field, pre-filled from verification_uri_complete (§3.3.1) but still to be confirmed. */
  async page(request: FastifyRequest, typed: unknown): Promise<InteractionOutcome> {
    const normalized = typeof typed === 'string' ? normalizeUserCode(typed) : undefined;
    // Only a well-formed code goes back into the page and the sign-in's return address, never text taken from the URL as is.
    const userCode = normalized === undefined ? undefined : displayUserCode(normalized);
    const user = await this.session.currentUser(request);
    if (!user) return this.pages.login(request, { returnTo: returnTo(userCode) });
    return this.devicePages.codeEntry(request, user, { userCode });
  }

  /** POST /device: the code typed or confirmed; the consent page when it names a pending request. */
  async submitCode(request: FastifyRequest, form: DeviceForm): Promise<InteractionOutcome> {
    const found = await this.find(request, form);
    if (found.kind === 'page') return found.outcome;
    const { authorization, client, userCode } = found;
    return this.devicePages.consent(request, (await this.session.currentUser(request))!, client, splitScope(authorization.scope), userCode);
  }

  /** POST /device/decision: Allow or Deny, recorded once and audited in the same transaction. */
  async decide(request: FastifyRequest, form: DeviceForm): Promise<InteractionOutcome> {
    if (form.decision !== 'allow' && form.decision !== 'deny') return this.pages.error(400, 'invalid_request', 'Please choose Allow or Deny.', { retryUrl: DEVICE_ROUTES.page });
    const found = await this.find(request, form);
    if (found.kind === 'page') return found.outcome;
    const { authorization, client } = found;
    const user = (await this.session.currentUser(request))!;
    const allowed = form.decision === 'allow';
    const scope = splitScope(authorization.scope);
    const decided = await this.transactions.run(async (manager) => {
      const recorded = await this.devices.decide(
        authorization.id,
        {
          status: allowed ? DeviceAuthorizationStatus.Approved : DeviceAuthorizationStatus.Denied,
          userId: user.id,
          authTime: this.session.authTime(request),
          amr: formatAmr(this.session.authenticationMethods(request)),
          // Always the session's: its end revokes what the device obtained (DeviceSessionEnd, SessionRefreshTokens).
          sid: this.session.publicSessionId(request),
        },
        manager,
      );
      if (recorded) {
        await this.audit.record({ actor: `user:${user.id}`, action: allowed ? 'device.approved' : 'device.denied', subject: `client:${client.id}`, details: { device_authorization: authorization.id, scope: authorization.scope } }, manager);
      }
      return recorded;
    });
    if (!decided) return this.pages.error(400, 'invalid_request', 'This code has expired or has been used already. Start again on your device.', { retryUrl: DEVICE_ROUTES.page });
    if (allowed) {
      // The access page lists the device's client, and withdrawing it there revokes what the device holds.
      await this.consents.grant(user.id, client.id, scope);
      // An OpenID authentication ties the client to this sign-in, as in the code flow: its end reaches the client (Back-Channel Logout).
      if (holdsOpenId(authorization.scope)) await this.session.signedInto(request, client.id);
    }
    return this.devicePages.done(client, allowed);
  }

  /**
   * The checks of both forms: a signed-in person, this site's form, no wait for wrong codes, a
   * code naming a pending request, and the sign-in level its client asks for.
   */
  private async find(request: FastifyRequest, form: DeviceForm): Promise<Found> {
    const user = await this.session.currentUser(request);
    if (!user) return { kind: 'page', outcome: await this.pages.login(request, { returnTo: DEVICE_ROUTES.page }) };
    if (!this.session.csrfMatches(request, form.csrf_token)) {
      return { kind: 'page', outcome: this.pages.error(403, 'invalid_request', 'This form has expired or was not sent from this site. Please try again.', { retryUrl: DEVICE_ROUTES.page }) };
    }
    const typed = typeof form.user_code === 'string' ? form.user_code : '';
    // §5.1: every code checked counts until it proves right, so a burst of guesses sees the wait at once.
    const address = clientAddress(request);
    const sessionId = this.session.publicSessionId(request)!;
    const wait = await this.throttle.beginUserCode(address, sessionId);
    if (wait > 0) return { kind: 'page', outcome: this.pages.loginThrottled(wait, DEVICE_ROUTES.page) };
    const authorization = typed.length <= 32 ? await this.devices.pendingByUserCode(typed) : null;
    const client = authorization ? await this.clients.findById(authorization.clientId) : null;
    if (!authorization || !client) return { kind: 'page', outcome: this.devicePages.codeEntry(request, user, { failed: true }) };
    await this.throttle.userCodeFound(address, sessionId);
    const userCode = displayUserCode(normalizeUserCode(typed)!);
    const more = await this.level.step(request, user, client, returnTo(userCode));
    return more ? { kind: 'page', outcome: more } : { kind: 'found', authorization, client, userCode };
  }
}

function returnTo(userCode: string | undefined): string {
  return userCode === undefined ? DEVICE_ROUTES.page : `${DEVICE_ROUTES.page}?user_code=${userCode}`;
}

