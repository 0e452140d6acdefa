import { SAML, ValidateInResponseTo } from '@node-saml/node-saml';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readResponseEnvelope } from './saml-response-envelope.js';

const ACS = 'https://latchkey.example/federation/contoso/saml/acs';
const encode = (xml: string): string => Buffer.from(xml).toString('base64');
const response = (attributes: string, inner = ''): string => `<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" ID="_r" Version="2.0" IssueInstant="2026-11-29T12:00:00Z"${attributes}>${inner}</samlp:Response>`;
const SIGNATURE = '<ds:Signature xmlns:ds="http://www.w3.org/2000/09/xmldsig#"/>';

describe(readResponseEnvelope.name, () => {
  it('lets a Response for our ACS through, and one without Destination when it is not signed (SAML Bindings §3.5.5.2)', () => {
    expect(() => readResponseEnvelope(encode(response(` Destination="${ACS}"`, SIGNATURE)), ACS)).not.toThrow();
    expect(() => readResponseEnvelope(encode(response('')), ACS)).not.toThrow();
  });

  it.each([
    ['another Destination', encode(response(' Destination="https://other.example/acs"')), /Destination https:\/\/other\.example\/acs is not our ACS/],
    ['a signed Response without Destination', encode(response('', SIGNATURE)), /Destination \(none\)/],
    ['another message', encode('<samlp:LogoutRequest xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol"/>'), /LogoutRequest, not a samlp:Response/],
    ['something that is not base64', '<samlp:Response/>', /not base64/],
    ['a DOCTYPE', encode(`<!DOCTYPE r [<!ENTITY a "b">]>${response('')}`), /DOCTYPE/],
  ])('refuses %s', (_case, samlResponse, message) => {
    expect(() => readResponseEnvelope(samlResponse, ACS)).toThrow(message);
  });

  /**
   * The second layer, without ours: node-saml parses with @xmldom/xmldom, which resolves no
   * entity, internal or external; the response is refused and the file an external entity names
   * is never read into it (its content appears nowhere).
   */
  it('node-saml itself refuses an XXE payload without reading the file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'latchkey-xxe-'));
    writeFileSync(join(dir, 'secret'), 'node-saml-xxe-secret');
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', join(dir, 'k'), '-out', join(dir, 'c'), '-days', '1', '-subj', '/CN=idp'], { stdio: 'ignore' });
    const saml = new SAML({ issuer: 'sp', callbackUrl: ACS, idpCert: readFileSync(join(dir, 'c'), 'utf8'), audience: 'sp', validateInResponseTo: ValidateInResponseTo.never, wantAssertionsSigned: false, wantAuthnResponseSigned: false });
    const xml = `<?xml version="1.0"?><!DOCTYPE samlp:Response [<!ENTITY xxe SYSTEM "file://${join(dir, 'secret')}">]>${response('', '<saml:Issuer xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion">&xxe;</saml:Issuer>')}`;
    const outcome = await saml.validatePostResponseAsync({ SAMLResponse: encode(xml) }).then(
      (result) => JSON.stringify(result),
      (error: Error) => `refused: ${error.message}`,
    );
    expect(outcome).toMatch(/^refused: /);
    expect(outcome).not.toContain('node-saml-xxe-secret');
  });
});
