/**
 * What stops a console request, each turned into a page or a redirect by ConsoleExceptionFilter.
 * None carries a token, a secret or an upstream message with either.
 */

/** No console session (none, expired, idle, revoked): the administrator signs in, then comes back to `returnTo`. */
export class SignInRequired extends Error {
  constructor(readonly returnTo: string) {
    super('Signing in to the admin console is needed');
  }
}

/** A dangerous action needs a sign-in more recent than ADMIN_CONSOLE_REAUTH_SECONDS: sign in again, then back to `returnTo` (its confirmation page). */
export class ReauthenticationRequired extends Error {
  constructor(readonly returnTo: string) {
    super('This action needs a recent sign-in');
  }
}

/** A request the console refuses or cannot complete, shown as a page with this status. */
export class ConsoleRefusal extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    message: string,
    readonly options: { retryUrl?: string; endSession?: boolean } = {},
  ) {
    super(message);
  }
}

/** The admin API's answer to a request it refused: its status and its error_description, shown to the administrator as it is. */
export class AdminApiRefusal extends Error {
  constructor(
    readonly status: number,
    readonly error: string,
    description: string,
  ) {
    super(description);
  }
}

/** The form was not sent by the console's own page (its CSRF token is missing or wrong). */
export function formExpired(retryUrl: string): ConsoleRefusal {
  return new ConsoleRefusal(403, 'Request refused', 'This form has expired or was not sent from the admin console. Go back, reload the page and try again.', { retryUrl });
}

/**
 * The form of a change this administrator's roles do not allow (ConsoleVisit.can, read from the
 * table AdminAccess reads): the 403 page instead of a form the admin API would refuse when sent.
 */
export function notAllowedToChange(what: string, retryUrl: string): ConsoleRefusal {
  return new ConsoleRefusal(403, 'Not allowed', `Your administrator role does not let you change ${what}. An owner can, or can give you a role that does.`, { retryUrl });
}
