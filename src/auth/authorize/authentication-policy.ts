import { Injectable } from '@nestjs/common';
import { Clock } from '../../common/clock.js';
import { IdTokenHintReader } from '../../openid/id-token-hint.reader.js';
import { SubjectIdentifiers } from '../../openid/subject-identifiers.js';
import type { User } from '../../users/user.entity.js';
import { ConsentRequiredError, InvalidRequestError, LoginRequiredError, type OAuthError } from '../errors/oauth-error.js';
import { Prompt, type AuthorizationRequest } from './authorization-request.js';

/** What the authorization endpoint does next for a request. */
export type NextStep =
  | { kind: 'login'; returnTo: string }
  | { kind: 'consent'; user: User }
  | { kind: 'approve'; user: User }
  /** An error for the client's redirect URI: prompt=none cannot go on without a page. */
  | { kind: 'refuse'; error: OAuthError };

/** Where the person is: who is signed in and since when, and whether they consented to this request's scope. */
export interface Presence {
  user: User | null;
  authTime: Date | null;
  consented: boolean;
  /** The person signed in after this very request asked them to (LoginSession.signedInSinceAsked). */
  signedInSinceAsked: boolean;
}

/**
 * OpenID Connect Core §3.1.2.3 and §3.1.2.1: whether the person must sign in (again), be asked for
 * consent, or neither, from prompt, max_age and id_token_hint. Plain OAuth requests carry none of
 * these and behave as before: sign in when nobody is, ask unless consent was given.
 */
@Injectable()
export class AuthenticationPolicy {
  constructor(
    private readonly clock: Clock,
    private readonly hints: IdTokenHintReader,
    private readonly subjects: SubjectIdentifiers,
  ) {}

  async next(authorization: AuthorizationRequest, { user, authTime, consented, signedInSinceAsked }: Presence): Promise<NextStep> {
    const hinted = authorization.idTokenHint === undefined ? undefined : await this.hints.subject(authorization.idTokenHint, authorization.client.id);
    if (authorization.idTokenHint !== undefined && hinted === undefined) {
      return { kind: 'refuse', error: new InvalidRequestError('id_token_hint is not an ID token this server issued to this client') };
    }
    // Dynamic Registration §2 default_max_age: for requests that name none.
    const maxAge = authorization.maxAge ?? authorization.client.openId.defaultMaxAge ?? undefined;
    // A sign-in this request asked for answers its prompt=login, select_account and max_age (max_age=0
    // included); without this, a request whose parameters come back unchanged (pushed ones, a
    // client's default_max_age) would ask again after every sign-in.
    const reauthenticationAsked =
      authorization.prompt.has(Prompt.Login) ||
      authorization.prompt.has(Prompt.SelectAccount) ||
      // max_age: the sign-in is too old (Core §3.1.2.1); a session without a time is too.
      (maxAge !== undefined && (authTime === null || this.clock.now().getTime() - authTime.getTime() > maxAge * 1000));
    const signInNeeded =
      user === null ||
      (reauthenticationAsked && !signedInSinceAsked) ||
      // The client expects someone else (Core §3.1.2.1 id_token_hint), by the sub it knows them by.
      (hinted !== undefined && hinted !== this.subjects.of(authorization.client, user.id));

    if (authorization.prompt.has(Prompt.None)) {
      if (signInNeeded) return { kind: 'refuse', error: new LoginRequiredError('Nobody is signed in as this request needs, and prompt=none forbids asking') };
      if (!consented) return { kind: 'refuse', error: new ConsentRequiredError('The person has not allowed this application this access, and prompt=none forbids asking') };
      return { kind: 'approve', user };
    }
    if (signInNeeded) return { kind: 'login', returnTo: `/authorize?${authorization.rawQuery}` };
    if (!consented || authorization.prompt.has(Prompt.Consent)) return { kind: 'consent', user };
    return { kind: 'approve', user };
  }
}
