import { DOMParser } from '@xmldom/xmldom';
import { X509Certificate } from 'node:crypto';
import { METADATA_NS, PROTOCOL_NS, SAML_BINDING, XMLDSIG_NS } from './saml-names.js';

/** What this server uses of an identity provider's metadata (SAML Metadata §2.4.3 IDPSSODescriptor). */
export interface IdpMetadata {
  entityId: string;
  /** Where AuthnRequests go, and how: HTTP-Redirect when the IdP offers it, else HTTP-POST. */
  singleSignOn: { binding: 'redirect' | 'post'; location: string };
  /** Where our LogoutRequest goes by HTTP-Redirect; null when the IdP has no such endpoint. */
  singleLogout: string | null;
  /** The certificates whose keys sign its responses and assertions (PEM), KeyDescriptor use="signing" or no use. */
  signingCertificates: string[];
}

export class IdpMetadataError extends Error {}

/** A metadata document has a few certificates and endpoints; a large one is refused before parsing. */
export const MAX_METADATA_BYTES = 512 * 1024;

/**
 * Parses an IdP metadata document. No DTD is accepted at all: a metadata document never needs one
 * (SAML Metadata §2, schema-defined), and refusing it closes entity expansion and external entities
 * whatever the parser does with them. An EntitiesDescriptor is accepted when exactly one of its
 * entities is a SAML 2.0 IdP, as some IdPs publish their own metadata wrapped in one.
 */
export function parseIdpMetadata(xml: string): IdpMetadata {
  if (Buffer.byteLength(xml) > MAX_METADATA_BYTES) throw new IdpMetadataError(`the metadata is larger than ${MAX_METADATA_BYTES} bytes`);
  const problems: string[] = [];
  const fail = (message: string): void => void problems.push(message);
  const document = new DOMParser({ errorHandler: { warning: () => undefined, error: fail, fatalError: fail } }).parseFromString(xml, 'text/xml');
  if (problems.length > 0 || !document?.documentElement) throw new IdpMetadataError(`the metadata is not well-formed XML (${problems[0] ?? 'no root element'})`);
  if (document.doctype !== null) throw new IdpMetadataError('the metadata has a DOCTYPE, which SAML metadata never needs: refused');

  const idps = elements(document.getElementsByTagNameNS(METADATA_NS, 'IDPSSODescriptor')).filter((descriptor) => (descriptor.getAttribute('protocolSupportEnumeration') ?? '').split(/\s+/).includes(PROTOCOL_NS));
  if (idps.length !== 1) throw new IdpMetadataError(idps.length === 0 ? 'the metadata has no SAML 2.0 IDPSSODescriptor' : 'the metadata describes several SAML 2.0 identity providers; give the one to use');
  const descriptor = idps[0];
  const entity = descriptor.parentNode as Element | null;
  const entityId = entity?.localName === 'EntityDescriptor' ? entity.getAttribute('entityID') : null;
  if (!entityId) throw new IdpMetadataError('the IDPSSODescriptor is not inside an EntityDescriptor with an entityID');

  const endpoints = (name: string, binding: string): string[] =>
    children(descriptor, name)
      .filter((endpoint) => endpoint.getAttribute('Binding') === binding)
      .map((endpoint) => endpoint.getAttribute('Location') ?? '')
      .filter(isHttpUrl);
  const redirect = endpoints('SingleSignOnService', SAML_BINDING.Redirect)[0];
  const post = endpoints('SingleSignOnService', SAML_BINDING.Post)[0];
  if (redirect === undefined && post === undefined) throw new IdpMetadataError('the IdP offers no SingleSignOnService with the HTTP-Redirect or HTTP-POST binding');

  const signingCertificates = children(descriptor, 'KeyDescriptor')
    .filter((key) => (key.getAttribute('use') || 'signing') === 'signing')
    .flatMap((key) => elements(key.getElementsByTagNameNS(XMLDSIG_NS, 'X509Certificate')))
    .map((certificate) => toPem(certificate.textContent ?? ''));
  if (signingCertificates.length === 0) throw new IdpMetadataError('the IdP publishes no signing certificate (KeyDescriptor with use="signing" or no use)');

  return {
    entityId,
    singleSignOn: redirect !== undefined ? { binding: 'redirect', location: redirect } : { binding: 'post', location: post! },
    singleLogout: endpoints('SingleLogoutService', SAML_BINDING.Redirect)[0] ?? null,
    signingCertificates: [...new Set(signingCertificates)],
  };
}

/** @xmldom/xmldom's node lists are not iterable. */
function elements(list: { length: number; item(index: number): Element | null }): Element[] {
  return Array.from({ length: list.length }, (_, index) => list.item(index)!);
}

/** The element children of `parent` named `name` in the metadata namespace (not deeper: an extension may nest its own). */
function children(parent: Element, name: string): Element[] {
  const found: Element[] = [];
  for (let node = parent.firstChild; node !== null; node = node.nextSibling) {
    const element = node as Element;
    if (element.nodeType === 1 && element.namespaceURI === METADATA_NS && element.localName === name) found.push(element);
  }
  return found;
}

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || url.protocol === 'http:';
  } catch {
    return false;
  }
}

/** A ds:X509Certificate's base64 DER as PEM, checked to be a certificate Node can read. */
function toPem(base64: string): string {
  const body = base64.replace(/\s+/g, '');
  const pem = `-----BEGIN CERTIFICATE-----\n${body.match(/.{1,64}/g)?.join('\n') ?? ''}\n-----END CERTIFICATE-----\n`;
  try {
    new X509Certificate(pem);
  } catch {
    throw new IdpMetadataError('a signing certificate in the metadata is not a valid X.509 certificate');
  }
  return pem;
}
