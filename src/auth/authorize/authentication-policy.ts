import { Inject, Injectable } from '@nestjs/common';
import { isFirstPartyRequest } from '../../clients/first-party.js';
import { Clock } from '../../common/clock.js';
import { appConfig, type AppConfig } from '../../config/app.config.js';
import { IdTokenHintReader } from '../../openid/id-token-hint.reader.js';
import { SubjectIdentifiers } from '../../openid/subject-identifiers.js';
import type { User } from '../../users/user.entity.js';
import { AccessDeniedError, ConsentRequiredError, InteractionRequiredError, InvalidRequestError, LoginRequiredError, type OAuthError } from '../errors/oauth-error.js';
import { ACR, meetsAcr, requiredAcr, type Acr, type AuthenticationMethod } from '../../common/authentication-context.js';
import { Prompt, type AuthorizationRequest } from './authorization-request.js';

/** What the authorization endpoint does next for a request. */
export type NextStep =
  | { kind: 'login'; returnTo: string }
  | { kind: 'consent'; user: User }
  | { kind: 'approve'; user: User }
  /** Step-up: a person signed in with less than the level asked, who has a second factor, is asked for it only. */
  | { kind: 'second_factor'; user: User; returnTo: string }
  /** A person who must use a second factor and has none enrols one, then comes back. */
  | { kind: 'enrol'; user: User; returnTo: string }
  /** Signed in, but not in a group the client requires (issue 46): a page saying so, whose button returns access_denied to the client. */
  | { kind: 'no_access'; user: User }
  /** An error for the client's redirect URI: prompt=none cannot go on without a page. */
  | { kind: 'refuse'; error: OAuthError };

/** Where the person is: who is signed in and since when, and whether they consented to this request's scope. */
export interface Presence {
  user: User | null;
  authTime: Date | null;
  /** The person allowed this client this scope before (a consent), or just did (the consent form). */
  consented: boolean;
  /** The person signed in after this very request asked them to (LoginSession.signedInSinceAsked). */
  signedInSinceAsked: boolean;
  /** How the signed-in person proved who they are (RFC 8176). */
  amr: readonly AuthenticationMethod[];
  /** Which factors the person has enrolled (read only when the level asked is not met). */
  factors: () => Promise<{ oneTimeCodes: boolean; passkeys: boolean }>;
  /** Whether an administrator requires a second factor of them (per person or server-wide). */
  secondFactorRequired: boolean;
  /** Whether the client allows the way this session was made (locally, or through an upstream identity provider: clients:sign-in, issue 45). */
  signInWayAllowed: boolean;
  /** Whether the signed-in person is in a group the client requires, when it requires some (clients:groups --require, issue 46: GroupAccessRule). */
  groupAllowed: boolean;
}

/** The access_denied description when the person is not in a group the client requires (issue 46). */
export const NOT_IN_REQUIRED_GROUP = 'The person is not in a group this application requires';

/**
 * OpenID Connect Core §3.1.2.3 and §3.1.2.1: whether the person must sign in (again), be asked for
 * consent, or neither, from prompt, max_age and id_token_hint. Plain OAuth requests carry none of
 * these and behave as before: sign in when nobody is, ask unless consent was given. The one place
 * that decides whether the consent page is shown: never to the server's own console unless it
 * sends prompt=consent (isFirstPartyRequest, issue 48).
 */
@Injectable()
export class AuthenticationPolicy {
  constructor(
    private readonly clock: Clock,
    private readonly hints: IdTokenHintReader,
    private readonly subjects: SubjectIdentifiers,
    @Inject(appConfig.KEY) private readonly app: AppConfig,
  ) {}

  async next(authorization: AuthorizationRequest, presence: Presence): Promise<NextStep> {
    const { user, authTime, signedInSinceAsked } = presence;
    // Issue 48: the server's own console is no third party to ask; its scopes are still only those
    // the person's roles allow (narrowed when the code is issued). No consent is recorded for it.
    const consented = presence.consented || isFirstPartyRequest({ clientId: authorization.client.id, redirectUri: authorization.redirectUri }, this.app.issuer);
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
      // The client allows only some ways to sign in, and this session was made another way (issue 45).
      !presence.signInWayAllowed ||
      (reauthenticationAsked && !signedInSinceAsked) ||
      // The client expects someone else (Core §3.1.2.1 id_token_hint), by the sub it knows them by.
      (hinted !== undefined && hinted !== this.subjects.of(authorization.client, user.id));

    const returnTo = `/authorize?${authorization.rawQuery}`;
    const required = signInNeeded ? ACR.password : this.requiredLevel(authorization, presence);
    const levelMet = signInNeeded || meetsAcr(presence.amr, required);

    if (authorization.prompt.has(Prompt.None)) {
      if (signInNeeded) return { kind: 'refuse', error: new LoginRequiredError('Nobody is signed in as this request needs, and prompt=none forbids asking') };
      if (!presence.groupAllowed) return { kind: 'refuse', error: new AccessDeniedError(NOT_IN_REQUIRED_GROUP) };
      if (!levelMet) return { kind: 'refuse', error: new InteractionRequiredError(`The sign-in does not reach ${required}, and prompt=none forbids asking for more`) };
      if (!consented) return { kind: 'refuse', error: new ConsentRequiredError('The person has not allowed this application this access, and prompt=none forbids asking') };
      return { kind: 'approve', user };
    }
    if (signInNeeded) return { kind: 'login', returnTo };
    // Issue 46: the right person, but the client admits only some groups' members. Before any
    // second factor or consent: nothing more asked of someone who cannot get in.
    if (!presence.groupAllowed) return { kind: 'no_access', user };
    // A requested level is met or asked for, never silently passed over (no downgrade).
    if (!levelMet) {
      if (required === ACR.multiFactor) {
        const enrolled = await presence.factors();
        if (enrolled.oneTimeCodes) return { kind: 'second_factor', user, returnTo };
        // A passkey answers too: the sign-in page offers it. After a sign-in this request asked for that still does not reach the level, enrolment.
        if (enrolled.passkeys && !signedInSinceAsked) return { kind: 'login', returnTo };
        return { kind: 'enrol', user, returnTo };
      }
      // Phishing-resistant: only a passkey sign-in reaches it. After a sign-in this request asked for that still does not, refuse rather than loop.
      if (signedInSinceAsked) return { kind: 'refuse', error: new AccessDeniedError(`This application requires ${required}: a sign-in with a passkey`) };
      return { kind: 'login', returnTo };
    }
    // Core §3.1.2.1 prompt=consent asks again, the console's own request included.
    if (!consented || authorization.prompt.has(Prompt.Consent)) return { kind: 'consent', user };
    return { kind: 'approve', user };
  }

  /** The level this request needs (requiredAcr): its acr_values or the client's default, the client's floor, the person's requirement. */
  private requiredLevel(authorization: AuthorizationRequest, presence: Presence): Acr {
    return requiredAcr({ requested: authorization.acrValues, client: authorization.client, secondFactorRequired: presence.secondFactorRequired });
  }
}
