import { DOMParser } from '@xmldom/xmldom';
import { PROTOCOL_NS, XMLDSIG_NS } from './saml-names.js';

/**
 * The first look at a posted SAMLResponse (SAML Bindings §3.5.4: base64 of the XML, not deflated),
 * before node-saml checks its signatures:
 * - no DTD at all. A SAML message has no use for one (its syntax is SAML Core's XML Schema), and
 *   refusing it closes entity expansion and external entities (XXE) whatever a parser does with
 *   them; @xmldom/xmldom, which node-saml and xml-crypto use, resolves no entity either;
 * - a samlp:Response at the root;
 * - Destination (SAML Bindings §3.5.5.2): when present, our ACS URL; and present when the Response is
 *   signed, as the binding requires. The bearer Recipient inside the signed assertion is checked too
 *   (signed-assertion.ts), so an assertion for another SP's ACS is refused even in an unsigned Response.
 */
export function readResponseEnvelope(samlResponse: string, acs: string): void {
  if (!/^[A-Za-z0-9+/=\r\n]+$/.test(samlResponse)) throw new Error('SAMLResponse is not base64');
  const xml = Buffer.from(samlResponse, 'base64').toString('utf8');
  const problems: string[] = [];
  const fail = (message: string): void => void problems.push(message);
  const document = new DOMParser({ errorHandler: { warning: () => undefined, error: fail, fatalError: fail } }).parseFromString(xml, 'text/xml');
  if (/<!DOCTYPE/i.test(xml) || document?.doctype) throw new Error('the response has a DOCTYPE, which SAML never uses: refused (XML external entities)');
  const root = document?.documentElement;
  if (problems.length > 0 || !root) throw new Error(`the response is not well-formed XML (${problems[0]?.split('\n')[0] ?? 'no root element'})`);
  if (root.namespaceURI !== PROTOCOL_NS || root.localName !== 'Response') throw new Error(`the message is a ${root.localName}, not a samlp:Response`);
  const destination = root.getAttribute('Destination');
  let signed = false;
  for (let node = root.firstChild; node !== null; node = node.nextSibling) {
    const element = node as Element;
    if (element.nodeType === 1 && element.namespaceURI === XMLDSIG_NS && element.localName === 'Signature') signed = true;
  }
  if (destination ? destination !== acs : signed) throw new Error(`the response's Destination ${destination || '(none)'} is not our ACS ${acs}`);
}
