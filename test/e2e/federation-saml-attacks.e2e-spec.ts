/**
 * Issue 45, upstream SAML 2.0: the attacks on our Assertion Consumer Service, each with a response
 * made here that differs from a valid one in one thing (test/federation/support/saml-fixtures.ts),
 * signed with xml-crypto by an IdP whose key pair this run generated. Each is refused with a page
 * (never a stack trace) and signs nobody in: no person, no link, no session. The first test shows
 * the unaltered response does sign a person in, so each refusal is the altered thing's.
 * The wrapping fixtures are shown to fool a naive verifier (a valid signature somewhere, then "the"
 * assertion by path), so they are the real attacks of the literature, not malformed documents.
 */
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { getDataSourceToken } from '@nestjs/typeorm';
import { createSign, randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deflateRawSync } from 'node:zlib';
import type { DataSource } from 'typeorm';
import { IdentityProvidersService } from '../../src/identity-providers/identity-providers.service.js';
import { startAnotherInstance, startAtIssuer } from '../helpers/app-at-issuer.js';
import { Browser, type Page } from '../helpers/browser.js';
import { dropTestDatabase } from '../helpers/test-database.js';
import { within } from '../helpers/within.js';
import { encodeResponse, idpMetadataXml, makeSigningKeys, naiveVerify, newId, parse, requestIdOf, responseXml, serialize, signElement, type ResponseFields, type SigningKeys } from '../federation/support/saml-fixtures.js';

const IDP = 'crafted';
const IDP_ENTITY_ID = 'https://idp.crafted.example/metadata';
const ASSERTION_NS = 'urn:oasis:names:tc:SAML:2.0:assertion';
const PROTOCOL_NS = 'urn:oasis:names:tc:SAML:2.0:protocol';

describe('attacks on the SAML Assertion Consumer Service', () => {
  let nest: NestFastifyApplication;
  let issuer: URL;
  let idpKeys: SigningKeys;
  let attackerKeys: SigningKeys;

  const sp = (): { entityId: string; acs: string } => ({ entityId: `${issuer.origin}/federation/${IDP}/saml/metadata`, acs: `${issuer.origin}/federation/${IDP}/saml/acs` });
  const query = <T>(sql: string): Promise<T[]> => nest.get<DataSource>(getDataSourceToken()).query(sql);
  const count = async (table: string): Promise<number> => Number((await query<{ n: number | string }>(`SELECT COUNT(*) AS "n" FROM "${table}"`))[0].n);
  /** What a sign-in writes: a person, a link, a session (and the handoff between ACS and browser, which must not be left). */
  const written = async (): Promise<Record<string, number>> => ({ users: await count('users'), links: await count('upstream_links'), sessions: await count('sessions'), handoffs: await count('saml_handoffs') });

  /** A browser with a SAML sign-in pending at the crafted IdP, and the ID of the AuthnRequest it was sent with. */
  async function pendingSignIn(): Promise<{ browser: Browser; requestId: string }> {
    const browser = new Browser(issuer.origin);
    const start = await browser.get(`/federation/${IDP}/start`);
    expect(start.status).toBe(303);
    return { browser, requestId: requestIdOf(start.location!) };
  }

  /** A valid response to `requestId`, but for `changes`. */
  function fields(requestId: string | null, changes: Partial<ResponseFields> = {}): ResponseFields {
    const now = Date.now();
    return {
      issuer: IDP_ENTITY_ID,
      destination: sp().acs,
      inResponseTo: requestId,
      audience: sp().entityId,
      recipient: sp().acs,
      nameId: `person-${randomBytes(6).toString('hex')}`,
      attributes: { 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress': 'someone@crafted.example' },
      notBefore: new Date(now - 10_000),
      notOnOrAfter: new Date(now + 5 * 60_000),
      assertionId: newId(),
      responseId: newId(),
      authnContextClassRef: 'urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport',
      sessionIndex: newId(),
      ...changes,
    };
  }

  /** A response whose assertion is signed (what most IdPs send), by `keys`. */
  const assertionSigned = (f: ResponseFields, keys = idpKeys): string => signElement(responseXml(f), f.assertionId, keys);

  /** The IdP's page posting the response to our ACS: cross-site, so without our cookies. */
  async function postToAcs(xml: string, base = issuer.origin): Promise<Page> {
    const response = await fetch(`${base}/federation/${IDP}/saml/acs`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'cross-site', origin: 'https://idp.crafted.example' },
      body: new URLSearchParams({ SAMLResponse: encodeResponse(xml) }).toString(),
    });
    return { status: response.status, headers: response.headers, body: await response.text(), location: response.headers.get('location') ?? undefined };
  }

  /** Posts the response and, when the ACS accepts it, follows to the browser's GET. */
  async function deliver(browser: Browser, xml: string): Promise<{ acs: Page; complete?: Page }> {
    const acs = await postToAcs(xml);
    return acs.status === 303 ? { acs, complete: await browser.get(acs.location!) } : { acs };
  }

  const refusals = async (): Promise<string[]> => {
    const rows = await query<{ details: unknown }>(`SELECT "details" FROM "audit_events" WHERE "action" = 'upstream.sign_in_failed' ORDER BY "id"`);
    return rows.map((row) => String((typeof row.details === 'string' ? JSON.parse(row.details) : row.details).detail));
  };
  /** Why the next refusal was made, as the audit records it (written just after the page is sent). */
  async function nextRefusal(before: number): Promise<string> {
    expect(await within(2_000, async () => (await refusals()).length > before)).toBe(true);
    return (await refusals())[before];
  }

  /** Refused at the ACS, for `reason`, with a clean page, and nothing written. */
  async function expectRefusedAtAcs(xml: string, reason: RegExp): Promise<Page> {
    const before = await written();
    const audited = (await refusals()).length;
    const { acs } = await deliver(new Browser(issuer.origin), xml);
    expect(acs.status).toBe(400);
    expect(acs.headers.get('content-type')).toMatch(/^text\/html/);
    expect(acs.body).toContain('could not be verified');
    expect(acs.body).not.toMatch(/\bat [\w.]+ \(|Error:/);
    expect(await nextRefusal(audited)).toMatch(reason);
    expect(await written()).toEqual(before);
    return acs;
  }

  beforeAll(async () => {
    ({ nest, issuer } = await startAtIssuer({ OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true' }));
    idpKeys = makeSigningKeys('crafted-idp');
    attackerKeys = makeSigningKeys('attacker');
    const metadataFile = join(mkdtempSync(join(tmpdir(), 'latchkey-saml-metadata-')), 'idp.xml');
    writeFileSync(metadataFile, idpMetadataXml(IDP_ENTITY_ID, 'https://idp.crafted.example/sso', idpKeys.cert, 'https://idp.crafted.example/slo'));
    await nest.get(IdentityProvidersService).create({ id: IDP, displayName: 'Crafted', protocol: 'saml', settings: { metadataFile } }, 'cli');
  });
  afterAll(async () => {
    await nest?.close();
    await dropTestDatabase();
  });

  it('accepts the unaltered response: the person is signed in (so each refusal below is its one change)', async () => {
    const { browser, requestId } = await pendingSignIn();
    const before = await written();
    const { acs, complete } = await deliver(browser, assertionSigned(fields(requestId)));
    expect(acs.status).toBe(303);
    expect(complete).toMatchObject({ status: 303, location: '/' });
    expect(await written()).toEqual({ users: before.users + 1, links: before.links + 1, sessions: before.sessions + 1, handoffs: 0 });
    // A response signed as a whole (the assertion inside it unsigned) is accepted too.
    const second = await pendingSignIn();
    const f = fields(second.requestId);
    expect((await deliver(second.browser, signElement(responseXml(f), f.responseId, idpKeys))).complete?.location).toBe('/');
  });

  it('refuses an unsigned response', async () => {
    const { requestId } = await pendingSignIn();
    await expectRefusedAtAcs(responseXml(fields(requestId)), /Invalid signature/);
  });

  it('refuses a response signed by another key, though its KeyInfo carries that key’s certificate', async () => {
    const { requestId } = await pendingSignIn();
    const xml = assertionSigned(fields(requestId), attackerKeys);
    // Valid for whoever trusts the certificate the signature itself carries: the trust must come from the IdP's metadata.
    expect(naiveVerify(xml, attackerKeys.cert)).not.toBeNull();
    await expectRefusedAtAcs(xml, /Invalid signature/);
  });

  it('refuses an assertion for another service provider (Audience)', async () => {
    const { requestId } = await pendingSignIn();
    await expectRefusedAtAcs(assertionSigned(fields(requestId, { audience: 'https://other-sp.example/metadata' })), /audience mismatch/);
  });

  it('refuses an assertion confirmed for another ACS (Recipient), though the Response names ours', async () => {
    const { requestId } = await pendingSignIn();
    await expectRefusedAtAcs(assertionSigned(fields(requestId, { recipient: 'https://other-sp.example/acs' })), /Recipient https:\/\/other-sp\.example\/acs is not our ACS/);
  });

  it('refuses a signed Response sent to another ACS (Destination), though its assertion names ours', async () => {
    const { requestId } = await pendingSignIn();
    const f = fields(requestId, { destination: 'https://other-sp.example/acs' });
    await expectRefusedAtAcs(signElement(responseXml(f), f.responseId, idpKeys), /Destination https:\/\/other-sp\.example\/acs is not our ACS/);
  });

  it('refuses an expired assertion (NotOnOrAfter past, beyond the clock skew)', async () => {
    const { requestId } = await pendingSignIn();
    const now = Date.now();
    await expectRefusedAtAcs(assertionSigned(fields(requestId, { notBefore: new Date(now - 10 * 60_000), notOnOrAfter: new Date(now - 2 * 60_000) })), /expired|No valid subject confirmation/);
  });

  it('refuses an unsolicited (IdP-initiated) response: no InResponseTo', async () => {
    await pendingSignIn();
    await expectRefusedAtAcs(assertionSigned(fields(null)), /InResponseTo is missing/);
  });

  it('refuses the same response twice, and on another instance of the same database', async () => {
    const { browser, requestId } = await pendingSignIn();
    const xml = assertionSigned(fields(requestId));
    expect((await deliver(browser, xml)).complete?.location).toBe('/');
    await expectRefusedAtAcs(xml, /accepted before \(replay\)/);

    const { browser: other, requestId: otherRequest } = await pendingSignIn();
    const once = assertionSigned(fields(otherRequest));
    const second = await startAnotherInstance();
    try {
      expect((await deliver(other, once)).complete?.location).toBe('/');
      const before = await written();
      const audited = (await refusals()).length;
      const replayed = await postToAcs(once, second.baseUrl);
      expect(replayed.status).toBe(400);
      expect(await nextRefusal(audited)).toMatch(/accepted before \(replay\)/);
      expect(await written()).toEqual(before);
    } finally {
      await second.nest.close();
    }
  });

  it('refuses a response to another browser’s request at that browser’s GET (login CSRF)', async () => {
    const victim = await pendingSignIn();
    const attacker = await pendingSignIn();
    const before = await written();
    const audited = (await refusals()).length;
    // The attacker's own valid response (to the attacker's request), pushed through the victim's browser.
    const { acs, complete } = await deliver(victim.browser, assertionSigned(fields(attacker.requestId)));
    expect(acs.status).toBe(303);
    expect(complete?.status).toBe(400);
    expect(complete?.body).toContain('could not be verified');
    expect(await nextRefusal(audited)).toMatch(/a request this browser did not send/);
    expect(await written()).toEqual(before);
    // The handle was spent: the attacker's own browser cannot use it either.
    expect((await attacker.browser.get(acs.location!)).status).toBe(400);
    expect(await written()).toEqual(before);
  });

  it('refuses an XML external entity (DOCTYPE) and never reads the file it names', async () => {
    const secretFile = join(mkdtempSync(join(tmpdir(), 'latchkey-xxe-')), 'secret.txt');
    const secret = `xxe-secret-${randomBytes(8).toString('hex')}`;
    writeFileSync(secretFile, secret);
    const { requestId } = await pendingSignIn();
    const f = fields(requestId);
    // The entity sits in the Response's unsigned Issuer, so the assertion's signature still verifies.
    const signed = assertionSigned(f).replace(`<saml:Issuer>${IDP_ENTITY_ID}</saml:Issuer><samlp:Status>`, '<saml:Issuer>&xxe;</saml:Issuer><samlp:Status>');
    const xml = `<?xml version="1.0"?><!DOCTYPE samlp:Response [<!ENTITY xxe SYSTEM "file://${secretFile}">]>${signed}`;
    const page = await expectRefusedAtAcs(xml, /DOCTYPE/);
    expect(page.body).not.toContain(secret);
    const audit = await query<{ details: unknown }>('SELECT "details" FROM "audit_events"');
    expect(JSON.stringify(audit)).not.toContain(secret);
  });

  it('ends no session on a LogoutRequest that is unsigned or signed by another key; ends it on the IdP’s own, once', async () => {
    const { browser, requestId } = await pendingSignIn();
    const f = fields(requestId);
    expect((await deliver(browser, assertionSigned(f))).complete?.location).toBe('/');
    const signedIn = async (): Promise<boolean> => (await browser.get('/account')).body.includes('You are signed in');
    expect(await signedIn()).toBe(true);
    /** A LogoutRequest for the session, by the HTTP-Redirect binding (SAML Bindings §3.4.4.1: deflated, base64; the signature over the query as sent). */
    const logoutRequest = (keys: SigningKeys | null): string => {
      const xml = `<samlp:LogoutRequest xmlns:samlp="${PROTOCOL_NS}" xmlns:saml="${ASSERTION_NS}" ID="${newId()}" Version="2.0" IssueInstant="${new Date().toISOString()}" Destination="${issuer.origin}/federation/${IDP}/saml/slo"><saml:Issuer>${IDP_ENTITY_ID}</saml:Issuer><saml:NameID Format="urn:oasis:names:tc:SAML:2.0:nameid-format:persistent">${f.nameId}</saml:NameID><samlp:SessionIndex>${f.sessionIndex}</samlp:SessionIndex></samlp:LogoutRequest>`;
      let query = `SAMLRequest=${encodeURIComponent(deflateRawSync(xml).toString('base64'))}&SigAlg=${encodeURIComponent('http://www.w3.org/2001/04/xmldsig-more#rsa-sha256')}`;
      if (keys) query += `&Signature=${encodeURIComponent(createSign('RSA-SHA256').update(query).sign(keys.key, 'base64'))}`;
      return `/federation/${IDP}/saml/slo?${query}`;
    };
    expect((await new Browser(issuer.origin).get(logoutRequest(null))).status).toBe(400);
    expect((await new Browser(issuer.origin).get(logoutRequest(attackerKeys))).status).toBe(400);
    expect(await signedIn()).toBe(true);

    const genuine = logoutRequest(idpKeys);
    const answer = await new Browser(issuer.origin).get(genuine);
    expect(answer.status).toBe(303);
    expect(answer.location).toMatch(/^https:\/\/idp\.crafted\.example\/slo\?SAMLResponse=/);
    expect(await signedIn()).toBe(false);
    expect((await new Browser(issuer.origin).get(genuine)).status).toBe(400);
  });

  describe('XML signature wrapping (Somorovsky et al., "On Breaking SAML", USENIX Security 2012)', () => {
    /** A response whose assertion is validly signed for `requestId`, and an attacker's assertion naming someone else. */
    function material(requestId: string): { signed: Document; evil: Element } {
      const genuine = fields(requestId, { nameId: 'genuine-person' });
      const signed = parse(assertionSigned(genuine));
      const evilFields = fields(requestId, { nameId: 'attacker-chosen' });
      const evil = parse(responseXml(evilFields)).getElementsByTagNameNS(ASSERTION_NS, 'Assertion').item(0)!;
      return { signed, evil };
    }
    const assertionOf = (document: Document): Element => document.getElementsByTagNameNS(ASSERTION_NS, 'Assertion').item(0)!;

    /** The wrapped document fools the naive verifier (it would sign in the attacker's choice), and our ACS refuses it. */
    async function expectWrappingRefused(xml: string): Promise<void> {
      expect(naiveVerify(xml, idpKeys.cert)).toBe('attacker-chosen');
      await expectRefusedAtAcs(xml, /signature|multiple assertions/i);
    }

    it('XSW3: the attacker’s assertion before the signed one, as siblings', async () => {
      const { signed, evil } = material((await pendingSignIn()).requestId);
      const original = assertionOf(signed);
      original.parentNode!.insertBefore(signed.importNode(evil, true), original);
      await expectWrappingRefused(serialize(signed));
    });

    it('XSW4: the signed assertion moved inside the attacker’s', async () => {
      const { signed, evil } = material((await pendingSignIn()).requestId);
      const original = assertionOf(signed);
      const wrapper = signed.importNode(evil, true) as Element;
      original.parentNode!.replaceChild(wrapper, original);
      wrapper.appendChild(original);
      await expectWrappingRefused(serialize(signed));
    });

    it('XSW7: the signed assertion hidden in an Extensions element, the attacker’s in its place', async () => {
      const { signed, evil } = material((await pendingSignIn()).requestId);
      const original = assertionOf(signed);
      const response = signed.documentElement;
      const extensions = signed.createElementNS(PROTOCOL_NS, 'samlp:Extensions');
      response.replaceChild(signed.importNode(evil, true), original);
      response.insertBefore(extensions, response.getElementsByTagNameNS(PROTOCOL_NS, 'Status').item(0));
      extensions.appendChild(original);
      await expectWrappingRefused(serialize(signed));
    });

    it('XSW8: the attacker’s assertion carries the signature, the signed assertion moved into its ds:Object', async () => {
      const { signed, evil } = material((await pendingSignIn()).requestId);
      const original = assertionOf(signed);
      const signature = original.getElementsByTagNameNS('http://www.w3.org/2000/09/xmldsig#', 'Signature').item(0)!;
      const wrapper = signed.importNode(evil, true) as Element;
      // The reference still finds the signed assertion by its ID (unique in the document), now inside the signature.
      original.removeChild(signature);
      const object = signed.createElementNS('http://www.w3.org/2000/09/xmldsig#', 'ds:Object');
      object.appendChild(original);
      signature.appendChild(object);
      wrapper.insertBefore(signature, wrapper.getElementsByTagNameNS(ASSERTION_NS, 'Subject').item(0));
      signed.documentElement.replaceChild(wrapper, signed.documentElement.getElementsByTagNameNS(ASSERTION_NS, 'Assertion').item(0)!);
      await expectWrappingRefused(serialize(signed));
    });

    it('XSW1: a signed Response moved into the signature of the attacker’s unsigned Response', async () => {
      const { requestId } = await pendingSignIn();
      const genuine = fields(requestId, { nameId: 'genuine-person' });
      const signedResponse = parse(signElement(responseXml(genuine), genuine.responseId, idpKeys));
      const evilResponse = parse(responseXml(fields(requestId, { nameId: 'attacker-chosen' })));
      const original = signedResponse.documentElement;
      const signature = original.getElementsByTagNameNS('http://www.w3.org/2000/09/xmldsig#', 'Signature').item(0)!;
      original.removeChild(signature);
      const object = signedResponse.createElementNS('http://www.w3.org/2000/09/xmldsig#', 'ds:Object');
      object.appendChild(original);
      signature.appendChild(object);
      // At the end of the attacker's Response, so that "the first assertion" is the attacker's.
      evilResponse.documentElement.appendChild(evilResponse.importNode(signature, true));
      await expectWrappingRefused(serialize(evilResponse));
    });
  });
});
