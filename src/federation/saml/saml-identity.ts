import type { Profile } from '@node-saml/node-saml';
import type { AuthenticationMethod } from '../../common/authentication-context.js';
import type { SamlSettings } from '../../identity-providers/identity-provider-settings.js';
import type { UpstreamIdentity } from '../upstream-identity.js';
import { AssertionRefused, type SignedAssertionFacts } from './signed-assertion.js';
import { NAMEID_FORMAT } from './saml-names.js';

const CLASSES = 'urn:oasis:names:tc:SAML:2.0:ac:classes:';

/**
 * SAML authentication context classes (SAML Authentication Context §3.4) and the vendors' own, as
 * RFC 8176 methods. A class not listed adds nothing: the sign-in still counts as the upstream's
 * (`fed`), and only a provider trusted for its level (trustAuthenticationLevel) has these counted.
 */
const METHODS_OF_CLASS: Record<string, AuthenticationMethod[]> = {
  [`${CLASSES}Password`]: ['pwd'],
  [`${CLASSES}PasswordProtectedTransport`]: ['pwd'],
  // A time-synchronised token (RSA SecurID and the like) and the mobile two-factor contracts: two factors.
  [`${CLASSES}TimeSyncToken`]: ['otp', 'mfa'],
  [`${CLASSES}MobileTwoFactorContract`]: ['mfa'],
  [`${CLASSES}MobileTwoFactorUnregistered`]: ['mfa'],
  // A private key on a smart card (and its PIN): a hardware-held key and two factors. X509: ADFS's and Entra ID's certificate-based sign-in, usually a smart card.
  [`${CLASSES}Smartcard`]: ['hwk', 'mfa'],
  [`${CLASSES}SmartcardPKI`]: ['hwk', 'mfa'],
  [`${CLASSES}X509`]: ['hwk', 'mfa'],
  // Entra ID and ADFS say a multi-factor sign-in with this (Entra ID's SAML token reference); Shibboleth's REFEDS MFA profile.
  'http://schemas.microsoft.com/claims/multipleauthn': ['mfa'],
  'https://refeds.org/profile/mfa': ['mfa'],
  'http://schemas.microsoft.com/ws/2008/06/identity/authenticationmethod/password': ['pwd'],
};

/**
 * Entra ID and ADFS say how the person signed in in this attribute too (its values are the
 * methods' URIs, multipleauthn after a second factor), while their AuthnContextClassRef stays a
 * password class: both are read.
 */
export const AUTHN_METHODS_ATTRIBUTE = 'http://schemas.microsoft.com/claims/authnmethodsreferences';

/** What an AuthnContextClassRef or an authnmethodsreferences value says, as RFC 8176 methods. */
export function methodsOf(classRefs: readonly string[]): AuthenticationMethod[] {
  return [...new Set(classRefs.flatMap((ref) => METHODS_OF_CLASS[ref] ?? []))];
}

/** upstream_links.subject's length. */
const MAX_SUBJECT_LENGTH = 255;

/** The first value of each attribute, as text (an attribute with several values gives its first, as ID token claims are single-valued). */
export function attributesOf(profile: Profile): Record<string, string> {
  const attributes = (profile.attributes ?? {}) as Record<string, unknown>;
  const claims: Record<string, string> = {};
  for (const [name, value] of Object.entries(attributes)) {
    const first = Array.isArray(value) ? value[0] : value;
    if (typeof first === 'string') claims[name] = first;
  }
  return claims;
}

function allValues(profile: Profile, name: string): string[] {
  const value = ((profile.attributes ?? {}) as Record<string, unknown>)[name];
  return (Array.isArray(value) ? value : [value]).filter((item): item is string => typeof item === 'string');
}

/** What SAML Single Logout needs back to name the person's session upstream (SAML Core §3.7.1): kept as UpstreamIdentity.session.logoutHint. */
export interface SamlLogoutHint {
  nameId: string;
  nameIdFormat: string | null;
  nameQualifier?: string;
  spNameQualifier?: string;
  sessionIndex: string | null;
}

/** A logoutHint as identityOf wrote it; null for anything else (another protocol's, or none). */
export function parseLogoutHint(logoutHint: string | null): SamlLogoutHint | null {
  if (logoutHint === null) return null;
  try {
    const hint = JSON.parse(logoutHint) as Partial<SamlLogoutHint> | null;
    return typeof hint?.nameId === 'string' && hint.nameId !== '' ? (hint as SamlLogoutHint) : null;
  } catch {
    return null;
  }
}

/**
 * The person the signed assertion names. The subject is the configured attribute, or else the
 * NameID; a transient NameID is refused as a subject (SAML Core §8.3.8: a new one each sign-in,
 * so every sign-in would make a new person here).
 */
export function identityOf(profile: Profile, facts: SignedAssertionFacts, settings: SamlSettings): UpstreamIdentity {
  const claims = attributesOf(profile);
  const nameId = typeof profile.nameID === 'string' ? profile.nameID : '';
  const nameIdFormat = typeof profile.nameIDFormat === 'string' ? profile.nameIDFormat : null;
  let subject: string | undefined;
  if (settings.subjectAttribute !== null) {
    subject = claims[settings.subjectAttribute];
    if (!subject) throw new AssertionRefused(`the assertion has no attribute ${settings.subjectAttribute} (the configured subject attribute)`);
  } else {
    if (nameIdFormat === NAMEID_FORMAT.Transient) throw new AssertionRefused('the NameID is transient: configure the IdP to send a persistent NameID, or set subject_attribute');
    subject = nameId;
  }
  if (subject === '' || subject.length > MAX_SUBJECT_LENGTH) throw new AssertionRefused(`the subject must be 1 to ${MAX_SUBJECT_LENGTH} characters`);
  const hint: SamlLogoutHint = {
    nameId,
    nameIdFormat,
    ...(typeof profile.nameQualifier === 'string' ? { nameQualifier: profile.nameQualifier } : {}),
    ...(typeof profile.spNameQualifier === 'string' ? { spNameQualifier: profile.spNameQualifier } : {}),
    sessionIndex: facts.sessionIndex,
  };
  // The groups attribute is multi-valued (Entra ID's groups claim URI, memberOf): all its values, for UpstreamGroups.
  const groups = settings.groupsAttribute ? { [settings.groupsAttribute]: allValues(profile, settings.groupsAttribute) } : {};
  return {
    subject,
    claims: { ...claims, ...groups },
    amr: methodsOf([...facts.authnContextClassRefs, ...allValues(profile, AUTHN_METHODS_ATTRIBUTE)]),
    // upstream_sessions.upstream_sid holds 255 characters; a longer SessionIndex still reaches the IdP through the hint.
    session: { upstreamSid: facts.sessionIndex !== null && facts.sessionIndex.length <= 255 ? facts.sessionIndex : null, logoutHint: nameId ? JSON.stringify(hint) : null },
  };
}
