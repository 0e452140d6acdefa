import type { UpstreamProvider } from '../identity-providers/identity-provider-settings.js';

/**
 * Why an upstream sign-in did not sign anyone in:
 * - `unreachable`: discovery, the metadata, the token endpoint or the keys could not be read;
 * - `invalid_answer`: the answer failed a check (state, iss, signature, audience, nonce, expiry, replay);
 * - `denied` / `upstream_error`: the upstream said no, or failed;
 * - `expired`: the browser came back with no sign-in pending here (too late, another browser, or twice);
 * - `no_account`: nobody here is linked to that person and the provider creates no accounts;
 * - `misconfigured`: a secret or key the settings name cannot be read;
 * - `deactivated`: the person linked to that upstream account is deactivated here (issue 46).
 */
export type UpstreamFailureKind = 'unreachable' | 'invalid_answer' | 'denied' | 'upstream_error' | 'expired' | 'no_account' | 'misconfigured' | 'deactivated';

/** An upstream sign-in that failed: shown as a page naming the provider (never the detail, which goes to the log and the audit). */
export class UpstreamFailure extends Error {
  constructor(
    readonly provider: Pick<UpstreamProvider, 'id' | 'displayName'>,
    readonly kind: UpstreamFailureKind,
    readonly detail: string,
  ) {
    super(`${provider.id}: ${kind}: ${detail}`);
    this.name = 'UpstreamFailure';
  }
}

/** What the person reads for each failure: what happened and what to do, never a stack trace. */
export function failureMessage(failure: UpstreamFailure): { status: number; message: string } {
  const name = failure.provider.displayName;
  switch (failure.kind) {
    case 'unreachable':
      return { status: 502, message: `${name} could not be reached. Please try again in a moment, or sign in another way.` };
    case 'misconfigured':
      return { status: 503, message: `Signing in with ${name} is not set up correctly here. Please tell your administrator.` };
    case 'invalid_answer':
      return { status: 400, message: `The answer from ${name} could not be verified, so nobody was signed in. Please start again.` };
    case 'denied':
      return { status: 403, message: `${name} did not sign you in. Please start again, or sign in another way.` };
    case 'upstream_error':
      return { status: 502, message: `${name} reported an error. Please start again, or sign in another way.` };
    case 'expired':
      return { status: 400, message: `This sign-in with ${name} has expired or was already used. Please start again.` };
    case 'deactivated':
      return { status: 403, message: `${name} signed you in, but your account here has been deactivated. Ask your administrator.` };
    case 'no_account':
      return { status: 403, message: `${name} signed you in, but you have no account here yet. Ask your administrator to give you access.` };
  }
}
