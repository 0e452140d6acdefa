import xml2js from 'xml2js';
import { AssertionRefused, checkSignedAssertion } from './signed-assertion.js';

const ACS = 'https://latchkey.example/federation/contoso/saml/acs';
const ISSUER = 'https://idp.example/metadata';
const NOW = Date.parse('2026-11-29T12:00:00Z');
const expected = { issuer: ISSUER, acs: ACS, now: NOW, skewMs: 60_000 };

/** The signed assertion as node-saml hands it over (xml2js, prefixes stripped: its parseXml2JsFromString). */
async function parsed(confirmationData: string, options: { issuer?: string; method?: string; authn?: string } = {}): Promise<unknown> {
  const xml =
    `<saml:Assertion xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="_a1" Version="2.0" IssueInstant="2026-11-29T11:59:50Z">` +
    `<saml:Issuer>${options.issuer ?? ISSUER}</saml:Issuer>` +
    `<saml:Subject><saml:NameID>ana</saml:NameID><saml:SubjectConfirmation Method="${options.method ?? 'urn:oasis:names:tc:SAML:2.0:cm:bearer'}">${confirmationData}</saml:SubjectConfirmation></saml:Subject>` +
    `<saml:Conditions NotBefore="2026-11-29T11:59:50Z" NotOnOrAfter="2026-11-29T12:04:50Z"/>` +
    (options.authn ?? `<saml:AuthnStatement AuthnInstant="2026-11-29T11:59:50Z" SessionIndex="_s1"><saml:AuthnContext><saml:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport</saml:AuthnContextClassRef></saml:AuthnContext></saml:AuthnStatement>`) +
    `</saml:Assertion>`;
  return new xml2js.Parser({ explicitRoot: true, explicitCharkey: true, tagNameProcessors: [xml2js.processors.stripPrefix] }).parseStringPromise(xml);
}
const data = (attributes: Record<string, string>): string => `<saml:SubjectConfirmationData ${Object.entries(attributes).map(([name, value]) => `${name}="${value}"`).join(' ')}/>`;
const GOOD = { Recipient: ACS, NotOnOrAfter: '2026-11-29T12:04:50Z', InResponseTo: '_r1' };

describe(checkSignedAssertion.name, () => {
  it('reads a bearer assertion for our ACS that answers our request (SAML Profiles §4.1.4.2)', async () => {
    expect(checkSignedAssertion(await parsed(data(GOOD)), expected)).toEqual({
      id: '_a1',
      issuer: ISSUER,
      inResponseTo: '_r1',
      // The later of the confirmation's and the Conditions' NotOnOrAfter, plus the skew: as long as it could be accepted.
      acceptableUntil: new Date(Date.parse('2026-11-29T12:04:50Z') + 60_000),
      authnContextClassRefs: ['urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport'],
      sessionIndex: '_s1',
    });
  });

  it.each([
    ['another Recipient', data({ ...GOOD, Recipient: 'https://other.example/acs' }), {}, /Recipient https:\/\/other\.example\/acs is not our ACS/],
    ['no Recipient', data({ NotOnOrAfter: GOOD.NotOnOrAfter, InResponseTo: '_r1' }), {}, /Recipient \(none\)/],
    ['an expired confirmation', data({ ...GOOD, NotOnOrAfter: '2026-11-29T11:58:59Z' }), {}, /expired/],
    ['no NotOnOrAfter', data({ Recipient: ACS, InResponseTo: '_r1' }), {}, /no NotOnOrAfter/],
    ['a NotBefore on a bearer confirmation', data({ ...GOOD, NotBefore: '2026-11-29T11:59:00Z' }), {}, /must not have NotBefore/],
    ['no InResponseTo (IdP-initiated)', data({ Recipient: ACS, NotOnOrAfter: GOOD.NotOnOrAfter }), {}, /unsolicited/],
    ['no bearer confirmation', data(GOOD), { method: 'urn:oasis:names:tc:SAML:2.0:cm:holder-of-key' }, /no bearer SubjectConfirmation/],
    ['another issuer', data(GOOD), { issuer: 'https://evil.example' }, /issued by https:\/\/evil\.example/],
    ['no AuthnStatement', data(GOOD), { authn: '' }, /no AuthnStatement/],
  ])('refuses %s', async (_case, confirmation, options, message) => {
    const assertion = await parsed(confirmation, options);
    expect(() => checkSignedAssertion(assertion, expected)).toThrow(AssertionRefused);
    expect(() => checkSignedAssertion(assertion, expected)).toThrow(message);
  });

  it('accepts a confirmation within the clock skew', async () => {
    expect(checkSignedAssertion(await parsed(data({ ...GOOD, NotOnOrAfter: '2026-11-29T11:59:30Z' })), expected).inResponseTo).toBe('_r1');
  });
});
