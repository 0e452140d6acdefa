/**
 * SAML responses made by hand for the attack tests: an IdP's signing key pair generated per run
 * (openssl, as test/helpers/self-signed.ts does; no key is committed), its metadata, responses
 * built field by field, and XML signatures made with xml-crypto's SignedXml (the library node-saml
 * verifies with), so that each test changes exactly one thing in an otherwise valid response.
 */
import { DOMParser, XMLSerializer } from '@xmldom/xmldom';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inflateRawSync } from 'node:zlib';
import { SignedXml } from 'xml-crypto';

export interface SigningKeys {
  /** PKCS#8 PEM. */
  key: string;
  cert: string;
  keyFile: string;
  certFile: string;
}

/** A fresh RSA key and self-signed certificate (xml-crypto signs with RSA-SHA256). */
export function makeSigningKeys(name: string): SigningKeys {
  const dir = mkdtempSync(join(tmpdir(), 'latchkey-saml-keys-'));
  const keyFile = join(dir, `${name}.key`);
  const certFile = join(dir, `${name}.crt`);
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', keyFile, '-out', certFile, '-days', '2', '-subj', `/CN=${name}`], { stdio: 'ignore' });
  return { key: readFileSync(keyFile, 'utf8'), cert: readFileSync(certFile, 'utf8'), keyFile, certFile };
}

function certBody(pem: string): string {
  return pem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, '');
}

/** An IdP's metadata document (SAML Metadata §2.4.3) naming `cert` as its signing certificate. */
export function idpMetadataXml(entityId: string, sso: string, cert: string, slo?: string): string {
  return `<?xml version="1.0"?>
<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" xmlns:ds="http://www.w3.org/2000/09/xmldsig#" entityID="${entityId}">
  <md:IDPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">
    <md:KeyDescriptor use="signing"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>${certBody(cert)}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>
    ${slo ? `<md:SingleLogoutService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="${slo}"/>` : ''}
    <md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="${sso}"/>
  </md:IDPSSODescriptor>
</md:EntityDescriptor>`;
}

export interface ResponseFields {
  issuer: string;
  /** The Response's Destination; null: none. */
  destination: string | null;
  /** Both the Response's and the bearer confirmation's InResponseTo; null: none (IdP-initiated). */
  inResponseTo: string | null;
  audience: string;
  recipient: string;
  nameId: string;
  attributes: Record<string, string>;
  /** The validity window (Conditions; the confirmation's NotOnOrAfter is the same). */
  notBefore: Date;
  notOnOrAfter: Date;
  assertionId: string;
  responseId: string;
  authnContextClassRef: string;
  sessionIndex: string;
}

export function newId(): string {
  return `_${randomBytes(16).toString('hex')}`;
}

function escape(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/"/g, '&quot;');
}

/** An assertion (SAML Core §2.3.3) as IdPs write it for Web Browser SSO (Profiles §4.1.4.2). */
export function assertionXml(f: ResponseFields): string {
  const inResponseTo = f.inResponseTo === null ? '' : ` InResponseTo="${escape(f.inResponseTo)}"`;
  const attributes = Object.entries(f.attributes)
    .map(([name, value]) => `<saml:Attribute Name="${escape(name)}" NameFormat="urn:oasis:names:tc:SAML:2.0:attrname-format:uri"><saml:AttributeValue xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="xs:string">${escape(value)}</saml:AttributeValue></saml:Attribute>`)
    .join('');
  return (
    `<saml:Assertion xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="${f.assertionId}" Version="2.0" IssueInstant="${f.notBefore.toISOString()}">` +
    `<saml:Issuer>${escape(f.issuer)}</saml:Issuer>` +
    `<saml:Subject><saml:NameID Format="urn:oasis:names:tc:SAML:2.0:nameid-format:persistent">${escape(f.nameId)}</saml:NameID>` +
    `<saml:SubjectConfirmation Method="urn:oasis:names:tc:SAML:2.0:cm:bearer"><saml:SubjectConfirmationData NotOnOrAfter="${f.notOnOrAfter.toISOString()}" Recipient="${escape(f.recipient)}"${inResponseTo}/></saml:SubjectConfirmation></saml:Subject>` +
    `<saml:Conditions NotBefore="${f.notBefore.toISOString()}" NotOnOrAfter="${f.notOnOrAfter.toISOString()}"><saml:AudienceRestriction><saml:Audience>${escape(f.audience)}</saml:Audience></saml:AudienceRestriction></saml:Conditions>` +
    `<saml:AuthnStatement AuthnInstant="${f.notBefore.toISOString()}" SessionIndex="${escape(f.sessionIndex)}"><saml:AuthnContext><saml:AuthnContextClassRef>${escape(f.authnContextClassRef)}</saml:AuthnContextClassRef></saml:AuthnContext></saml:AuthnStatement>` +
    `<saml:AttributeStatement>${attributes}</saml:AttributeStatement>` +
    `</saml:Assertion>`
  );
}

/** A samlp:Response around `assertions` (one, normally; more for the wrapping attacks). */
export function responseXml(f: ResponseFields, assertions: string = assertionXml(f)): string {
  const destination = f.destination === null ? '' : ` Destination="${escape(f.destination)}"`;
  const inResponseTo = f.inResponseTo === null ? '' : ` InResponseTo="${escape(f.inResponseTo)}"`;
  return (
    `<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="${f.responseId}" Version="2.0" IssueInstant="${f.notBefore.toISOString()}"${destination}${inResponseTo}>` +
    `<saml:Issuer>${escape(f.issuer)}</saml:Issuer>` +
    `<samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/></samlp:Status>` +
    assertions +
    `</samlp:Response>`
  );
}

/**
 * Signs the element whose ID is `id` in `xml` (an enveloped signature after its Issuer, RSA-SHA256,
 * exclusive canonicalization, the certificate in KeyInfo), as IdPs do (SAML Core §5.4).
 */
export function signElement(xml: string, id: string, keys: Pick<SigningKeys, 'key' | 'cert'>): string {
  const signer = new SignedXml({
    privateKey: keys.key,
    publicCert: keys.cert,
    signatureAlgorithm: 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
    canonicalizationAlgorithm: 'http://www.w3.org/2001/10/xml-exc-c14n#',
  });
  signer.addReference({
    xpath: `//*[@ID='${id}']`,
    transforms: ['http://www.w3.org/2000/09/xmldsig#enveloped-signature', 'http://www.w3.org/2001/10/xml-exc-c14n#'],
    digestAlgorithm: 'http://www.w3.org/2001/04/xmlenc#sha256',
  });
  signer.computeSignature(xml, { location: { reference: `//*[@ID='${id}']/*[local-name(.)='Issuer']`, action: 'after' } });
  return signer.getSignedXml();
}

/**
 * What a naive service provider does (the wrapping attacks' target, Somorovsky et al., "On Breaking
 * SAML", USENIX Security 2012, §4): check that the document holds a valid signature by a trusted
 * key somewhere, then read "the" assertion where the schema puts it (the Response's first
 * Assertion child), not caring which element the signature covers. Returns the NameID it would
 * sign in, or null when no signature verifies.
 */
export function naiveVerify(xml: string, trustedCert: string): string | null {
  const document = new DOMParser().parseFromString(xml, 'text/xml');
  const found = document.getElementsByTagNameNS('http://www.w3.org/2000/09/xmldsig#', 'Signature');
  const signatures = Array.from({ length: found.length }, (_, index) => found.item(index)!);
  const valid = signatures.some((signature) => {
    const verifier = new SignedXml({ publicCert: trustedCert });
    verifier.loadSignature(signature);
    try {
      return verifier.checkSignature(xml);
    } catch {
      return false;
    }
  });
  if (!valid) return null;
  const child = (parent: Element | null | undefined, name: string): Element | undefined => {
    for (let node = parent?.firstChild ?? null; node !== null; node = node.nextSibling) if ((node as Element).localName === name) return node as Element;
    return undefined;
  };
  return child(child(child(document.documentElement as unknown as Element, 'Assertion'), 'Subject'), 'NameID')?.textContent ?? null;
}

/** A DOM for the wrapping attacks' surgery, and back to text. */
export function parse(xml: string): Document {
  return new DOMParser().parseFromString(xml, 'text/xml') as unknown as Document;
}
export function serialize(document: Document): string {
  return new XMLSerializer().serializeToString(document as never);
}

/** The HTTP-POST binding's SAMLResponse (SAML Bindings §3.5.4). */
export function encodeResponse(xml: string): string {
  return Buffer.from(xml, 'utf8').toString('base64');
}

/** The ID of the AuthnRequest in an HTTP-Redirect binding URL (SAML Bindings §3.4.4.1: deflated, base64). */
export function requestIdOf(location: string): string {
  const request = inflateRawSync(Buffer.from(new URL(location).searchParams.get('SAMLRequest') ?? '', 'base64')).toString('utf8');
  const id = /\sID="([^"]+)"/.exec(request)?.[1];
  if (!id) throw new Error(`no AuthnRequest ID in ${request}`);
  return id;
}

/** The message (SAMLRequest or SAMLResponse) of an HTTP-Redirect binding URL, as text (SAML Bindings §3.4.4.1). */
export function redirectMessage(location: string): string {
  const parameters = new URL(location).searchParams;
  return inflateRawSync(Buffer.from(parameters.get('SAMLRequest') ?? parameters.get('SAMLResponse') ?? '', 'base64')).toString('utf8');
}
