import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { IdpMetadataError, parseIdpMetadata } from './idp-metadata.js';

/** A throwaway certificate, as an IdP's metadata carries one (base64 DER). */
function certificate(): string {
  const dir = mkdtempSync(join(tmpdir(), 'latchkey-idp-metadata-'));
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', join(dir, 'k'), '-out', join(dir, 'c'), '-days', '1', '-subj', '/CN=idp'], { stdio: 'ignore' });
  return readFileSync(join(dir, 'c'), 'utf8').replace(/-----[^-]+-----/g, '').replace(/\s+/g, '');
}

const CERT = certificate();
const OTHER = certificate();
const key = (use: string | null, cert: string): string => `<md:KeyDescriptor${use ? ` use="${use}"` : ''}><ds:KeyInfo><ds:X509Data><ds:X509Certificate>${cert}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>`;
const entity = (inner: string, entityId = 'https://idp.example/metadata'): string =>
  `<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" xmlns:ds="http://www.w3.org/2000/09/xmldsig#" entityID="${entityId}"><md:IDPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">${inner}</md:IDPSSODescriptor></md:EntityDescriptor>`;
const sso = (binding: 'HTTP-Redirect' | 'HTTP-POST', location: string): string => `<md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:${binding}" Location="${location}"/>`;
const pem = (body: string): string => `-----BEGIN CERTIFICATE-----\n${body.match(/.{1,64}/g)!.join('\n')}\n-----END CERTIFICATE-----\n`;

describe(parseIdpMetadata.name, () => {
  it('reads the entity ID, the HTTP-Redirect SSO and SLO endpoints, and the signing certificates (not the encryption one)', () => {
    const xml = entity(
      key('signing', CERT) + key('encryption', OTHER) + '<md:SingleLogoutService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="https://idp.example/slo"/>' + sso('HTTP-POST', 'https://idp.example/sso-post') + sso('HTTP-Redirect', 'https://idp.example/sso'),
    );
    expect(parseIdpMetadata(xml)).toEqual({ entityId: 'https://idp.example/metadata', singleSignOn: { binding: 'redirect', location: 'https://idp.example/sso' }, singleLogout: 'https://idp.example/slo', signingCertificates: [pem(CERT)] });
  });

  it('takes a KeyDescriptor without use as a signing key (SAML Metadata §2.4.1.1), and HTTP-POST when the IdP offers only that', () => {
    const parsed = parseIdpMetadata(entity(key(null, CERT) + key('signing', OTHER) + sso('HTTP-POST', 'https://idp.example/sso')));
    expect(parsed.signingCertificates).toEqual([pem(CERT), pem(OTHER)]);
    expect(parsed.singleSignOn).toEqual({ binding: 'post', location: 'https://idp.example/sso' });
    expect(parsed.singleLogout).toBeNull();
  });

  it('reads the one IdP of an EntitiesDescriptor', () => {
    const xml = `<md:EntitiesDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata">${entity(key('signing', CERT) + sso('HTTP-Redirect', 'https://idp.example/sso'))}</md:EntitiesDescriptor>`;
    expect(parseIdpMetadata(xml).entityId).toBe('https://idp.example/metadata');
  });

  it.each([
    ['no IdP', '<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="x"/>', /no SAML 2.0 IDPSSODescriptor/],
    ['no signing certificate', entity(key('encryption', CERT) + sso('HTTP-Redirect', 'https://idp.example/sso')), /no signing certificate/],
    ['no SSO endpoint of our bindings', entity(key('signing', CERT) + '<md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:SOAP" Location="https://idp.example/soap"/>'), /no SingleSignOnService/],
    ['a certificate that is none', entity(key('signing', 'bm90IGEgY2VydGlmaWNhdGU=') + sso('HTTP-Redirect', 'https://idp.example/sso')), /not a valid X\.509 certificate/],
    ['not XML', 'this is not XML <', /not well-formed/],
  ])('refuses metadata with %s', (_case, xml, message) => {
    expect(() => parseIdpMetadata(xml)).toThrow(IdpMetadataError);
    expect(() => parseIdpMetadata(xml)).toThrow(message);
  });

  it('refuses a DOCTYPE, and never reads the file an external entity names (XXE)', () => {
    const secretFile = join(mkdtempSync(join(tmpdir(), 'latchkey-xxe-')), 'secret');
    writeFileSync(secretFile, 'metadata-xxe-secret');
    const xml = `<?xml version="1.0"?><!DOCTYPE md:EntityDescriptor [<!ENTITY xxe SYSTEM "file://${secretFile}">]>${entity(key('signing', CERT) + sso('HTTP-Redirect', 'https://idp.example/sso'), '&xxe;')}`;
    let message = '';
    try {
      parseIdpMetadata(xml);
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/DOCTYPE|not well-formed/);
    expect(message).not.toContain('metadata-xxe-secret');
  });
});
