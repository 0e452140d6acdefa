/**
 * RFC 8176 §2 authentication method reference values this server records: `pwd` (a password),
 * `otp` (a one-time code), `hwk`/`swk` (proof of a hardware- or software-held key: a passkey),
 * `user` (the authenticator verified the person: WebAuthn user verification), `mfa` (more than one factor),
 * and `fed`: a sign-in at an upstream identity provider (issue 45). `fed` is Latchkey's own value
 * (RFC 8176 §2 lets a deployment use values outside the registry); alone it is worth a password,
 * and the upstream's own methods join it only when the provider is trusted for them.
 */
export type AuthenticationMethod = 'pwd' | 'otp' | 'hwk' | 'swk' | 'user' | 'mfa' | 'fed';

const METHODS: ReadonlySet<string> = new Set<AuthenticationMethod>(['pwd', 'otp', 'hwk', 'swk', 'user', 'mfa', 'fed']);

/** Whether `value` is an RFC 8176 method this server records. */
export function isAuthenticationMethod(value: unknown): value is AuthenticationMethod {
  return typeof value === 'string' && METHODS.has(value);
}

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

/** Whether `level` is `required` or stronger. */
export function acrAtLeast(level: Acr, required: Acr): boolean {
  return ACR_VALUES_SUPPORTED.indexOf(level) >= ACR_VALUES_SUPPORTED.indexOf(required);
}

/** Whether a sign-in with these methods meets the level `required`. */
export function meetsAcr(amr: readonly AuthenticationMethod[], required: Acr): boolean {
  return acrAtLeast(acrOf(amr), required);
}

/** Every source that may require a level of a sign-in (requiredAcr). */
export interface AcrSources {
  /** Core §3.1.2.1 acr_values: the known levels the request names; undefined when it names none (a device request never does, RFC 8628 §3.1). */
  requested: readonly Acr[] | undefined;
  /** The client's registration: its default_acr_values (Dynamic Registration §2) and its floor (minimum_acr, a Latchkey extension). */
  client: { readonly minimumAcr: Acr | null; readonly openId: { readonly defaultAcrValues?: readonly Acr[] } };
  /** An administrator requires a second factor of the person (users:update --require-mfa, MFA_REQUIRED). */
  secondFactorRequired: boolean;
}

/**
 * The level a sign-in must reach, from every source; the strictest wins. The one rule of the code
 * flow, pushed requests included (AuthenticationPolicy), and of the device flow (DeviceSignInLevel).
 * - What is asked: the weakest level the request names (any of them answers, OpenID Connect Core
 *   §3.1.2.1 acr_values), or else the client's default_acr_values, which stand in for a request that
 *   names none (Dynamic Registration §2: a default, so a request may ask for less).
 * - The client's minimum_acr is a floor: a request may ask for more, never less (issue 43).
 * - A person an administrator requires a second factor of needs at least that.
 */
export function requiredAcr({ requested, client, secondFactorRequired }: AcrSources): Acr {
  const asked = requested ?? client.openId.defaultAcrValues ?? [];
  const weakestAsked = ACR_VALUES_SUPPORTED.find((level) => asked.includes(level)) ?? ACR.password;
  const levels = [weakestAsked, client.minimumAcr ?? ACR.password, secondFactorRequired ? ACR.multiFactor : ACR.password];
  return levels.reduce((strictest, level) => (acrAtLeast(level, strictest) ? level : strictest));
}

/**
 * Whether a sign-in a grant recorded (its amr) meets what the client and the person require now:
 * the client's floor (minimum_acr) and the person's requirement, by requiredAcr for a grant that
 * names no level. The one rule of every grant that issues a person's token at the token endpoint
 * (GrantSignInLevel): password, refresh_token, token exchange, device_code and authorization_code.
 * default_acr_values take no part: a default stands in for acr_values at the authorization
 * endpoint and a request may ask for less (Dynamic Registration §2), so it bounds nothing a grant
 * must check again; a floor does (issue 43).
 */
export function meetsRequiredAcr(amr: readonly AuthenticationMethod[], client: Pick<AcrSources['client'], 'minimumAcr'>, secondFactorRequired: boolean): boolean {
  // requested [] rather than undefined: the grant asks for nothing, so no default stands in for it.
  return meetsAcr(amr, requiredAcr({ requested: [], client: { minimumAcr: client.minimumAcr, openId: {} }, secondFactorRequired }));
}

/** Stored space-separated on codes and refresh tokens; null (grants from before it was recorded) was a password. */
export function parseAmr(stored: string | null | undefined): AuthenticationMethod[] {
  const methods = (stored ?? '').split(' ').filter((m): m is AuthenticationMethod => METHODS.has(m));
  return methods.length > 0 ? methods : ['pwd'];
}

export function formatAmr(amr: readonly AuthenticationMethod[]): string {
  return amr.join(' ');
}
