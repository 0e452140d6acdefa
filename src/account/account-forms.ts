import { Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { AccountsService } from '../accounts/accounts.service.js';
import type { AuditOrigin } from '../audit/audit-actor.js';
import { AuditService } from '../audit/audit.service.js';
import type { InteractionOutcome } from '../auth/interaction/interaction-responder.js';
import { LoginSession } from '../auth/interaction/login-session.js';
import { Pages } from '../auth/interaction/pages.js';
import { DomainError } from '../common/domain-error.js';
import { clientAddress } from '../rate-limit/client-address.js';
import { LoginThrottle } from '../rate-limit/login-throttle.service.js';
import type { User } from '../users/user.entity.js';
import { UsersService } from '../users/users.service.js';
import { AccountPage, signInFirst } from './account-page.js';
import { ACCOUNT_ROUTES, afterForm, DONE } from './account-routes.js';
import { field, isRefused, readProfileForm, type AccountForm } from './profile-form.js';

/** The person behind a form of the account page, the row of the session it came from, and who to audit (with the address). */
export interface FormSender {
  user: User;
  sessionRow: string;
  actor: AuditOrigin;
}

/**
 * The account page's own forms (issue 48): the profile and the password. Each runs only for the
 * signed-in person, with this session's CSRF token (the Fetch Metadata check has already refused
 * other sites: @CookieForm), and each change is audited through AccountsService with the address.
 */
@Injectable()
export class AccountForms {
  constructor(
    private readonly session: LoginSession,
    private readonly pages: Pages,
    private readonly page: AccountPage,
    private readonly accounts: AccountsService,
    private readonly users: UsersService,
    private readonly throttle: LoginThrottle,
    private readonly audit: AuditService,
  ) {}

  /** The signed-in person sending a form with this session's CSRF token; otherwise the page that says why not, and nothing runs. */
  async sender(request: FastifyRequest, form: AccountForm): Promise<FormSender | InteractionOutcome> {
    const user = await this.session.currentUser(request);
    const sessionRow = this.session.sessionRowId(request);
    if (!user || sessionRow === null) return signInFirst();
    if (!this.session.csrfMatches(request, form?.csrf_token)) {
      return this.pages.error(403, 'invalid_request', 'This form has expired or was not sent from this site. Please try again.', { retryUrl: ACCOUNT_ROUTES.page });
    }
    return { user, sessionRow, actor: { actor: `user:${user.id}`, ip: request.ip } };
  }

  /** POST /account/profile: the name (and, without email set up, the address); 400 with what to fix, nothing stored, when refused. */
  async profile(request: FastifyRequest, form: AccountForm): Promise<InteractionOutcome> {
    const sender = await this.sender(request, form);
    if (!isSender(sender)) return sender;
    const read = readProfileForm(form, sender.user, this.page.emailEditable());
    if (isRefused(read)) return this.page.render(request, sender.user, { status: 400, profile: read });
    if (read.changed.length > 0) await this.accounts.updateOwnProfile(sender.user, read.changes, read.changed, sender.actor);
    return { kind: 'redirect', status: 303, location: afterForm(DONE.profile) };
  }

  /**
   * POST /account/password: the current password, then the new one twice. The current password is
   * checked as a sign-in's is, throttled by the same counters (a stolen session cookie cannot guess
   * it faster than the sign-in form could); then every other session ends (AccountsService).
   */
  async password(request: FastifyRequest, form: AccountForm): Promise<InteractionOutcome> {
    const sender = await this.sender(request, form);
    if (!isSender(sender)) return sender;
    const { user } = sender;
    const refuse = (status: number, passwordError: string) => this.page.render(request, user, { status, passwordError });
    if (user.passwordHash === '') return refuse(400, 'Your account has no password here: you sign in another way.');
    const current = field(form, 'current_password');
    const chosen = field(form, 'new_password');
    if (current === '') return refuse(400, 'Enter your current password.');
    if (chosen === '') return refuse(400, 'Enter a new password.');
    if (chosen !== field(form, 'new_password_confirm')) return refuse(400, 'The two new passwords are not the same.');
    const wait = await this.throttle.begin(clientAddress(request), user.username);
    if (wait > 0) return this.pages.loginThrottled(wait, ACCOUNT_ROUTES.page);
    if ((await this.users.checkPassword(user.username, current)).user?.id !== user.id) {
      await this.audit.record({ actor: sender.actor, action: 'user.password_change_refused', subject: `user:${user.id}`, details: { reason: 'wrong_current_password' } });
      return refuse(400, 'Your current password is not right.');
    }
    await this.throttle.succeeded(clientAddress(request), user.username);
    let passwordHash: string;
    try {
      passwordHash = await this.users.hashNewPassword(chosen);
    } catch (error) {
      if (error instanceof DomainError) return refuse(400, `The new password is not accepted: ${error.message}`);
      throw error;
    }
    const ended = await this.accounts.changeOwnPassword(user.id, passwordHash, sender.sessionRow, sender.actor);
    return { kind: 'redirect', status: 303, location: afterForm(DONE.password, { count: ended }) };
  }
}

export function isSender(checked: FormSender | InteractionOutcome): checked is FormSender {
  return 'user' in checked;
}
