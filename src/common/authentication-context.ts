/**
 * RFC 8176 §2 authentication method reference values this server records: `pwd` (a password),
 * `otp` (a one-time code), `hwk`/`swk` (proof of a hardware- or software-held key: a passkey),
 * `user` (the authenticator verified the person: WebAuthn user verification), `mfa` (more than one factor).
 */
export type AuthenticationMethod = 'pwd' | 'otp' | 'hwk' | 'swk' | 'user' | 'mfa';

const METHODS: ReadonlySet<string> = new Set<AuthenticationMethod>(['pwd', 'otp', 'hwk', 'swk', 'user', 'mfa']);

/**
 * The authentication context class references (OpenID Connect Core §2 acr) this server asserts
 * and accepts in acr_values, weakest first. Each names what the sign-in proved:
 * - `urn:latchkey:acr:pwd`: a password only;
 * - `urn:latchkey:acr:mfa`: a second factor as well (a one-time code or a recovery code), or a passkey;
 * - `urn:latchkey:acr:phr`: phishing-resistant, a passkey (a key bound to our origin: amr hwk or swk).
 */
export const ACR = {
  password: 'urn:latchkey:acr:pwd',
  multiFactor: 'urn:latchkey:acr:mfa',
  phishingResistant: 'urn:latchkey:acr:phr',
} as const;

export type Acr = (typeof ACR)[keyof typeof ACR];

/** Weakest first: a level meets every level before it. */
export const ACR_VALUES_SUPPORTED: readonly Acr[] = [ACR.password, ACR.multiFactor, ACR.phishingResistant];

export function isAcr(value: string): value is Acr {
  return (ACR_VALUES_SUPPORTED as readonly string[]).includes(value);
}

/** The level a sign-in with these methods reached. */
export function acrOf(amr: readonly AuthenticationMethod[]): Acr {
  if (amr.includes('hwk') || amr.includes('swk')) return ACR.phishingResistant;
  if (amr.includes('mfa') || amr.includes('otp')) return ACR.multiFactor;
  return ACR.password;
}

/** Whether a sign-in with these methods meets the level `required`. */
export function meetsAcr(amr: readonly AuthenticationMethod[], required: Acr): boolean {
  return ACR_VALUES_SUPPORTED.indexOf(acrOf(amr)) >= ACR_VALUES_SUPPORTED.indexOf(required);
}

/**
 * The level a request needs: the weakest of the levels asked (any of them answers, OpenID Connect
 * Core §3.1.2.1 acr_values, or the client's default_acr_values), at least a second factor for a
 * person an administrator requires one of (users:update --require-mfa, MFA_REQUIRED). The one
 * rule of the code flow (AuthenticationPolicy) and the device flow (DeviceSignInLevel).
 */
export function requiredAcr(asked: readonly string[], secondFactorRequired: boolean): Acr {
  const weakest = ACR_VALUES_SUPPORTED.find((level) => asked.includes(level)) ?? ACR.password;
  return secondFactorRequired && weakest === ACR.password ? ACR.multiFactor : weakest;
}

/** Stored space-separated on codes and refresh tokens; null (grants from before it was recorded) was a password. */
export function parseAmr(stored: string | null | undefined): AuthenticationMethod[] {
  const methods = (stored ?? '').split(' ').filter((m): m is AuthenticationMethod => METHODS.has(m));
  return methods.length > 0 ? methods : ['pwd'];
}

export function formatAmr(amr: readonly AuthenticationMethod[]): string {
  return amr.join(' ');
}
