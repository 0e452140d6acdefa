import type { Profile } from '@node-saml/node-saml';
import type { SamlSettings } from '../../identity-providers/identity-provider-settings.js';
import { identityOf, methodsOf, parseLogoutHint } from './saml-identity.js';
import type { SignedAssertionFacts } from './signed-assertion.js';

const facts: SignedAssertionFacts = { id: '_a', issuer: 'https://idp.example', inResponseTo: '_r', acceptableUntil: new Date(), authnContextClassRefs: [], sessionIndex: '_s1' };
const settings = (subjectAttribute: string | null = null): SamlSettings => ({ subjectAttribute }) as SamlSettings;
const profile = (changes: Partial<Profile> = {}): Profile =>
  ({ issuer: 'https://idp.example', nameID: 'ana', nameIDFormat: 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent', attributes: { mail: 'ana@contoso.example', groups: ['a', 'b'], uid: 'ana-7' }, ...changes }) as Profile;

describe('SAML identities', () => {
  it.each([
    [['urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport'], ['pwd']],
    [['urn:oasis:names:tc:SAML:2.0:ac:classes:Password'], ['pwd']],
    [['http://schemas.microsoft.com/claims/multipleauthn'], ['mfa']],
    [['urn:oasis:names:tc:SAML:2.0:ac:classes:MobileTwoFactorContract'], ['mfa']],
    [['urn:oasis:names:tc:SAML:2.0:ac:classes:TimeSyncToken'], ['otp', 'mfa']],
    [['urn:oasis:names:tc:SAML:2.0:ac:classes:X509'], ['hwk', 'mfa']],
    [['urn:oasis:names:tc:SAML:2.0:ac:classes:unspecified'], []],
    [['urn:example:unknown'], []],
  ])('AuthnContextClassRef %j is amr %j (RFC 8176)', (classes, amr) => {
    expect(methodsOf(classes)).toEqual(amr);
  });

  it('names the person by the NameID, with the first value of each attribute as claims, and keeps what Single Logout needs', () => {
    const identity = identityOf(profile(), facts, settings());
    expect(identity).toMatchObject({ subject: 'ana', claims: { mail: 'ana@contoso.example', groups: 'a', uid: 'ana-7' }, session: { upstreamSid: '_s1' } });
    expect(parseLogoutHint(identity.session.logoutHint)).toEqual({ nameId: 'ana', nameIdFormat: 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent', sessionIndex: '_s1' });
  });

  it('keeps every value of the configured groups attribute (multi-valued), the first value of the others', () => {
    const identity = identityOf(profile(), facts, { ...settings(), groupsAttribute: 'groups' });
    expect(identity.claims).toMatchObject({ mail: 'ana@contoso.example', groups: ['a', 'b'] });
    expect(identityOf(profile({ attributes: {} }), facts, { ...settings(), groupsAttribute: 'groups' }).claims.groups).toEqual([]);
  });

  it('reads the methods Entra ID and ADFS put in authnmethodsreferences beside a password class', () => {
    const entra = profile({ attributes: { 'http://schemas.microsoft.com/claims/authnmethodsreferences': ['http://schemas.microsoft.com/ws/2008/06/identity/authenticationmethod/password', 'http://schemas.microsoft.com/claims/multipleauthn'] } });
    expect(identityOf(entra, { ...facts, authnContextClassRefs: ['urn:oasis:names:tc:SAML:2.0:ac:classes:Password'] }, settings()).amr).toEqual(['pwd', 'mfa']);
  });

  it('names the person by the configured attribute, and refuses an assertion without it', () => {
    expect(identityOf(profile(), facts, settings('uid')).subject).toBe('ana-7');
    expect(() => identityOf(profile(), facts, settings('employeeNumber'))).toThrow(/no attribute employeeNumber/);
  });

  it('refuses a transient NameID as a subject (a new person at every sign-in)', () => {
    expect(() => identityOf(profile({ nameIDFormat: 'urn:oasis:names:tc:SAML:2.0:nameid-format:transient' }), facts, settings())).toThrow(/transient/);
  });

  it('reads no logout hint of another protocol', () => {
    expect(parseLogoutHint('eyJhbGciOiJSUzI1NiJ9.e30.sig')).toBeNull();
    expect(parseLogoutHint(null)).toBeNull();
  });
});
