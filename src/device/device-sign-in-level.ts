import { Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import type { InteractionOutcome } from '../auth/interaction/interaction-responder.js';
import { LoginSession } from '../auth/interaction/login-session.js';
import { ONE_TIME_CODES_PAGE, SECOND_FACTOR_PAGE } from '../auth/interaction/login.service.js';
import { Pages } from '../auth/interaction/pages.js';
import type { Client } from '../clients/client.entity.js';
import { ACR, meetsAcr, requiredAcr } from '../common/authentication-context.js';
import { SecondFactors } from '../factors/second-factors.service.js';
import type { User } from '../users/user.entity.js';

/**
 * The sign-in level a device's request needs before the person may allow it, by the code flow's
 * rule (requiredAcr) for a request without acr_values: the client's default_acr_values, its
 * floor (minimum_acr), and at least a second factor for a person an administrator requires one of.
 * A level not met is asked for the same way: the second factor, its enrolment, or a passkey sign-in.
 */
@Injectable()
export class DeviceSignInLevel {
  constructor(
    private readonly session: LoginSession,
    private readonly pages: Pages,
    private readonly factors: SecondFactors,
  ) {}

  /** Undefined when the signed-in person's sign-in is enough; else where they go first, coming back to `returnTo`. */
  async step(request: FastifyRequest, user: User, client: Client, returnTo: string): Promise<InteractionOutcome | undefined> {
    // RFC 8628 §3.1 has no acr_values: as for a code request that names none.
    const required = requiredAcr({ requested: undefined, client, secondFactorRequired: this.factors.mustHaveSecondFactor(user) });
    if (meetsAcr(this.session.authenticationMethods(request), required)) return undefined;
    if (required === ACR.multiFactor) {
      const enrolled = await this.factors.enrolled(user.id);
      if (enrolled.oneTimeCodes) {
        this.session.awaitSecondFactor(request, user, returnTo);
        return { kind: 'redirect', status: 303, location: SECOND_FACTOR_PAGE };
      }
      if (!enrolled.passkeys) return { kind: 'redirect', status: 303, location: `${ONE_TIME_CODES_PAGE}?return_to=${encodeURIComponent(returnTo)}` };
    }
    // A passkey answers both levels: the sign-in page offers it.
    return this.pages.login(request, { returnTo, username: user.username });
  }
}
