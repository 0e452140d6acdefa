import { Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { AccountsService } from '../accounts/accounts.service.js';
import type { InteractionOutcome } from '../auth/interaction/interaction-responder.js';
import { Pages } from '../auth/interaction/pages.js';
import { AccessWithdrawalService } from '../consents/access-withdrawal.service.js';
import { AccountForms, isSender } from './account-forms.js';
import { ACCOUNT_ROUTES, afterForm, DONE, SECTION } from './account-routes.js';
import { field, type AccountForm } from './profile-form.js';

/**
 * The account page's forms about where the person is signed in and who holds access: end one
 * session, end all the others, withdraw an application's access. Each acts on the signed-in
 * person's own sessions and grants only (a session or a client of someone else's is not found,
 * and nothing changes), and is audited with the address.
 */
@Injectable()
export class AccountAccessForms {
  constructor(
    private readonly forms: AccountForms,
    private readonly pages: Pages,
    private readonly accounts: AccountsService,
    private readonly access: AccessWithdrawalService,
  ) {}

  /** POST /account/sessions/end: one of the person's sessions, by the public id the page lists (another browser is signed out there). */
  async endSession(request: FastifyRequest, form: AccountForm): Promise<InteractionOutcome> {
    const sender = await this.forms.sender(request, form);
    if (!isSender(sender)) return sender;
    if (!(await this.accounts.endSession(sender.user.id, field(form, 'session_id'), sender.actor))) return this.notFound('There is no such session among yours: it may have ended already.', 'sessions');
    return { kind: 'redirect', status: 303, location: afterForm(DONE.sessionEnded) };
  }

  /** POST /account/sessions/end-others: "Sign out everywhere else" (OWASP ASVS 3.3.4), on every instance; this browser stays signed in. */
  async endOtherSessions(request: FastifyRequest, form: AccountForm): Promise<InteractionOutcome> {
    const sender = await this.forms.sender(request, form);
    if (!isSender(sender)) return sender;
    const ended = await this.accounts.signOutElsewhere(sender.user.id, sender.sessionRow, sender.actor);
    return { kind: 'redirect', status: 303, location: afterForm(DONE.othersEnded, { count: ended }) };
  }

  /** POST /account/access/withdraw: the consent, and that application's tokens and codes for the person, die at once (AccessWithdrawalService). */
  async withdraw(request: FastifyRequest, form: AccountForm): Promise<InteractionOutcome> {
    const sender = await this.forms.sender(request, form);
    if (!isSender(sender)) return sender;
    const clientId = field(form, 'client_id');
    const granted = (await this.access.list(sender.user.id)).some((grant) => grant.clientId === clientId);
    if (!granted) return this.notFound('That application has no access to withdraw.', 'applications');
    await this.access.withdraw(sender.user.id, clientId, sender.actor);
    return { kind: 'redirect', status: 303, location: afterForm(DONE.withdrawn, { client: clientId }) };
  }

  /** GET /account/access, the access page of before: the account page's section, with the notice a withdrawal left. */
  accessPage(withdrawn: unknown): InteractionOutcome {
    const location = typeof withdrawn === 'string' && withdrawn.length <= 64 ? afterForm(DONE.withdrawn, { client: withdrawn }) : `${ACCOUNT_ROUTES.page}#${SECTION.withdrawn}`;
    return { kind: 'redirect', status: 303, location };
  }

  private notFound(message: string, section: string): InteractionOutcome {
    return this.pages.error(404, 'not_found', message, { retryUrl: `${ACCOUNT_ROUTES.page}#${section}` });
  }
}
