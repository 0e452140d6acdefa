import { BEARER } from './saml-names.js';

/** An element as node-saml hands over the signed assertion (xml2js: attributes under `$`, text under `_`, children in arrays). */
interface XmlNode {
  $?: Record<string, string>;
  _?: string;
  [child: string]: XmlNode[] | Record<string, string> | string | undefined;
}

/** What this server reads of a signed assertion, besides its attributes (node-saml's profile has those). */
export interface SignedAssertionFacts {
  id: string;
  issuer: string;
  /** The bearer SubjectConfirmationData's InResponseTo: the ID of our AuthnRequest, inside the signature. */
  inResponseTo: string;
  /** The latest instant at which the assertion could still be accepted (its Conditions and confirmation), for the replay record. */
  acceptableUntil: Date;
  authnContextClassRefs: string[];
  sessionIndex: string | null;
}

/** A check the signed assertion failed; the message is for the log, never the page. */
export class AssertionRefused extends Error {}

function child(node: XmlNode | undefined, name: string): XmlNode[] {
  const value = node?.[name];
  return Array.isArray(value) ? value : [];
}

function instant(value: string | undefined, label: string): number | undefined {
  if (value === undefined) return undefined;
  const at = Date.parse(value);
  if (Number.isNaN(at)) throw new AssertionRefused(`${label} is not a date`);
  return at;
}

/**
 * The checks of SAML Profiles §4.1.4.3 that node-saml does not make, on the assertion exactly as
 * it was signed (node-saml's getAssertion() parses the signed bytes, never the document around
 * them): the issuer is the IdP's entity ID; one bearer SubjectConfirmation (§4.1.4.2) has a
 * SubjectConfirmationData whose Recipient is our ACS URL, whose NotOnOrAfter is not past, which has
 * no NotBefore, and whose InResponseTo names a request (IdP-initiated SSO is refused: an
 * unsolicited response cannot be bound to the browser that receives it, Profiles §4.1.5).
 */
export function checkSignedAssertion(parsed: unknown, expected: { issuer: string; acs: string; now: number; skewMs: number }): SignedAssertionFacts {
  const assertion = (parsed as { Assertion?: XmlNode } | undefined)?.Assertion;
  if (!assertion) throw new AssertionRefused('no signed assertion');
  const id = assertion.$?.ID;
  if (!id) throw new AssertionRefused('the assertion has no ID');
  const issuer = child(assertion, 'Issuer')[0]?._?.trim();
  if (issuer !== expected.issuer) throw new AssertionRefused(`the assertion was issued by ${issuer ?? 'nobody'}, not ${expected.issuer}`);

  const confirmations = child(child(assertion, 'Subject')[0], 'SubjectConfirmation').filter((confirmation) => confirmation.$?.Method === BEARER);
  if (confirmations.length === 0) throw new AssertionRefused('the assertion has no bearer SubjectConfirmation');
  const reasons: string[] = [];
  const usable = confirmations
    .flatMap((confirmation) => child(confirmation, 'SubjectConfirmationData'))
    .map((data) => data.$ ?? {})
    .filter((data) => {
      const notOnOrAfter = instant(data.NotOnOrAfter, 'SubjectConfirmationData NotOnOrAfter');
      if (data.Recipient !== expected.acs) reasons.push(`Recipient ${data.Recipient ?? '(none)'} is not our ACS ${expected.acs}`);
      else if (notOnOrAfter === undefined) reasons.push('no NotOnOrAfter');
      else if (expected.now - expected.skewMs >= notOnOrAfter) reasons.push('the confirmation has expired');
      else if (data.NotBefore !== undefined) reasons.push('a bearer confirmation must not have NotBefore');
      else if (!data.InResponseTo) reasons.push('no InResponseTo: an unsolicited (IdP-initiated) response');
      else return true;
      return false;
    });
  if (usable.length === 0) throw new AssertionRefused(`no usable bearer confirmation (${reasons.join('; ')})`);
  const inResponseTo = usable[0].InResponseTo;
  if (usable.some((data) => data.InResponseTo !== inResponseTo)) throw new AssertionRefused('the confirmations answer different requests');

  const conditions = child(assertion, 'Conditions')[0]?.$ ?? {};
  const ends = [instant(conditions.NotOnOrAfter, 'Conditions NotOnOrAfter'), ...usable.map((data) => instant(data.NotOnOrAfter, 'NotOnOrAfter')!)].filter((at): at is number => at !== undefined);
  const statements = child(assertion, 'AuthnStatement');
  if (statements.length === 0) throw new AssertionRefused('the assertion has no AuthnStatement (Profiles §4.1.4.2)');
  return {
    id,
    issuer,
    inResponseTo,
    acceptableUntil: new Date(Math.max(...ends) + expected.skewMs),
    authnContextClassRefs: statements.flatMap((statement) => child(child(statement, 'AuthnContext')[0], 'AuthnContextClassRef')).map((ref) => (ref._ ?? '').trim()).filter(Boolean),
    sessionIndex: statements[0].$?.SessionIndex ?? null,
  };
}
