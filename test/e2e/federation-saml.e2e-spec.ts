/**
 * Issue 45, upstream SAML 2.0: SP-initiated Web Browser SSO (SAML Profiles §4.1) against a real
 * identity provider, Debian's SimpleSAMLphp, served by PHP's built-in server: our AuthnRequest by
 * the HTTP-Redirect binding, its login form, its signed response posted to our ACS by the HTTP-POST
 * binding (cross-site: no cookie of ours comes with it), the browser's GET that binds the answer to
 * its pending sign-in, and a just-in-time account with the mapped profile. Then ForceAuthn when the
 * authorization request asks for a new sign-in, and Single Logout both ways (SAML Profiles §4.4),
 * by each binding: signing out here signs the person out at the IdP (our signed LogoutRequest), and
 * signing out at the IdP ends our session. Two SimpleSAMLphp instances, one answering our Single
 * Logout endpoint by HTTP-Redirect, the other by HTTP-POST (as Okta does).
 * The attacks on the ACS are in federation-saml-attacks.e2e-spec.ts.
 */
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { getDataSourceToken } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { ClientsService } from '../../src/clients/clients.service.js';
import { placeholders } from '../../src/database/prepared-statement.js';
import { IdentityProvidersService } from '../../src/identity-providers/identity-providers.service.js';
import { startAtIssuer } from '../helpers/app-at-issuer.js';
import { Browser, type Page } from '../helpers/browser.js';
import { dropTestDatabase } from '../helpers/test-database.js';
import { makeSigningKeys, redirectMessage } from '../federation/support/saml-fixtures.js';
import { SAML_TEST_USER, SimpleSamlPhp } from '../federation/support/simplesamlphp.js';

/** Our two upstream SAML providers, by the binding their Single Logout messages reach us with. */
const IDPS = { redirect: 'contoso', post: 'fabrikam' } as const;
const REDIRECT_URI = 'http://127.0.0.1:9/callback';

describe('upstream SAML 2.0 sign-in with SimpleSAMLphp (SP-initiated Web Browser SSO)', () => {
  let nest: NestFastifyApplication;
  let issuer: URL;
  const idps = new Map<string, SimpleSamlPhp>();
  let clientId: string;

  const sp = (idp: string): { entityId: string; acs: string; slo: string } => {
    const base = `${issuer.origin}/federation/${idp}/saml`;
    return { entityId: `${base}/metadata`, acs: `${base}/acs`, slo: `${base}/slo` };
  };
  const query = <T>(sql: string, parameters: unknown[] = []): Promise<T[]> => {
    const dataSource = nest.get<DataSource>(getDataSourceToken());
    return dataSource.query(placeholders(sql, dataSource.options.type), parameters);
  };

  /** Follows the IdP's redirects (its own pages) until a page that is not one. */
  async function atIdp(idp: SimpleSamlPhp, browser: Browser, location: string): Promise<Page> {
    let page = await browser.get(location);
    for (let hops = 0; (page.status === 302 || page.status === 303) && page.location && hops < 5; hops++) page = await browser.get(new URL(page.location, idp.baseUrl).href);
    return page;
  }

  /** SimpleSAMLphp's login form (exampleauth:UserPass), submitted with the test user's password. */
  async function logInAtIdp(idp: SimpleSamlPhp, browser: Browser, page: Page): Promise<Page> {
    const authState = /name="AuthState" value="([^"]+)"/.exec(page.body)?.[1];
    if (!authState) throw new Error(`Expected SimpleSAMLphp's login form, got ${page.status}:\n${page.body.slice(0, 2000)}\n${idp.log()}`);
    return browser.post(`${idp.baseUrl}/module.php/core/loginuserpass.php`, { username: SAML_TEST_USER.username, password: SAML_TEST_USER.password, AuthState: authState.replace(/&amp;/g, '&') });
  }

  /**
   * The IdP's auto-submitting form (HTTP-POST binding), posted to us as a browser would from the
   * IdP's page: a cross-site POST, which carries none of our SameSite=Lax cookies; then our
   * redirect, followed as a top-level GET with them.
   */
  async function postFromIdp(idp: SimpleSamlPhp, browser: Browser, page: Page, action: string): Promise<{ posted: Response; followed: Page }> {
    const form = /<form[^>]*action="([^"]+)"/.exec(page.body)?.[1]?.replace(/&amp;/g, '&');
    if (form !== action) throw new Error(`Expected the IdP's form posting to ${action}, got ${page.status}:\n${page.body.slice(0, 2000)}\n${idp.log()}`);
    const fields = Object.fromEntries([...page.body.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)].map((match) => [match[1], match[2].replace(/&amp;/g, '&').replace(/&quot;/g, '"')]));
    const posted = await fetch(action, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate', origin: idp.baseUrl },
      body: new URLSearchParams(fields).toString(),
    });
    expect(posted.status).toBe(303);
    return { posted, followed: await browser.get(posted.headers.get('location')!) };
  }

  /** The response at our ACS, and the GET it redirects to. */
  async function postToAcs(idp: string, browser: Browser, page: Page): Promise<Page> {
    const { posted, followed } = await postFromIdp(idps.get(idp)!, browser, page, sp(idp).acs);
    expect(posted.headers.get('location')).toMatch(new RegExp(`^/federation/${idp}/saml/complete\\?handle=[A-Za-z0-9_-]{43}$`));
    return followed;
  }

  /** A whole sign-in through `idp` in a new browser. */
  async function signIn(idp: string): Promise<Browser> {
    const browser = new Browser(issuer.origin);
    const ssp = idps.get(idp)!;
    const done = await postToAcs(idp, browser, await logInAtIdp(ssp, browser, await atIdp(ssp, browser, (await browser.get(`/federation/${idp}/start`)).location!)));
    expect(done).toMatchObject({ status: 303, location: '/' });
    expect((await browser.get('/account')).body).toContain('You are signed in');
    return browser;
  }

  beforeAll(async () => {
    ({ nest, issuer } = await startAtIssuer({ OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true' }));
    const spKeys = makeSigningKeys('latchkey-sp');
    for (const [binding, id] of Object.entries(IDPS)) {
      const idp = await SimpleSamlPhp.start({ ...sp(id), signingCertificate: spKeys.cert, sloBinding: binding as 'redirect' | 'post' });
      idps.set(id, idp);
      await nest.get(IdentityProvidersService).create(
        { id, displayName: id, protocol: 'saml', settings: { metadataUrl: idp.metadataUrl, trustEmail: true, spSigningKey: { file: spKeys.keyFile }, spSigningCertificate: { file: spKeys.certFile } } },
        'cli',
      );
    }
    const { client } = await nest.get(ClientsService).create({ name: 'RP', redirectUris: [REDIRECT_URI], scope: 'notes:read', isPublic: true });
    clientId = client.id;
  });
  afterAll(async () => {
    for (const idp of idps.values()) await idp.stop();
    await nest?.close();
    await dropTestDatabase();
  });

  it('serves our SP metadata for the IdP administrator: entity ID, ACS (HTTP-POST), SLO (both bindings), signing certificate', async () => {
    const { entityId, acs, slo } = sp(IDPS.redirect);
    const response = await fetch(entityId);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/samlmetadata\+xml/);
    const xml = await response.text();
    expect(xml).toContain(`entityID="${entityId}"`);
    expect(xml).toMatch(new RegExp(`<AssertionConsumerService[^>]*Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST"[^>]*Location="${acs}"`));
    expect(xml).toContain(`<SingleLogoutService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="${slo}"/>`);
    expect(xml).toContain(`<SingleLogoutService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="${slo}"/>`);
    expect(xml).toMatch(/<KeyDescriptor use="signing">/);
    expect(xml).toContain('WantAssertionsSigned="true"');
  });

  it('signs a new person in through SimpleSAMLphp, with a just-in-time account and the mapped profile', async () => {
    const idp = IDPS.redirect;
    const ssp = idps.get(idp)!;
    const browser = new Browser(issuer.origin);
    // login_hint rides beside the signed parameters (Entra ID reads it; SimpleSAMLphp ignores it).
    const start = await browser.get(`/federation/${idp}/start?login_hint=${encodeURIComponent('ana@contoso.example')}`);
    expect(start.status).toBe(303);
    expect(start.location).toMatch(new RegExp(`^${ssp.baseUrl}/saml2/idp/SSOService\\.php\\?SAMLRequest=`));
    expect(new URL(start.location!).searchParams.get('login_hint')).toBe('ana@contoso.example');
    const request = redirectMessage(start.location!);
    expect(request).toContain(`AssertionConsumerServiceURL="${sp(idp).acs}"`);
    expect(request).toContain(`>${sp(idp).entityId}</saml:Issuer>`);
    expect(request).not.toContain('ForceAuthn');
    // Signed by the HTTP-Redirect binding's rules (SAML Bindings §3.4.4.1), as our SP has a key.
    expect(new URL(start.location!).searchParams.get('SigAlg')).toBe('http://www.w3.org/2001/04/xmldsig-more#rsa-sha256');

    const done = await postToAcs(idp, browser, await logInAtIdp(ssp, browser, await atIdp(ssp, browser, start.location!)));
    expect(done).toMatchObject({ status: 303, location: '/' });
    const home = await browser.get('/account');
    expect(home.body).toContain('You are signed in');
    expect(home.body).toContain('<strong>ana</strong>');

    const [user] = await query<Record<string, unknown>>('SELECT "id", "username", "email", "email_verified", "name", "given_name", "family_name" FROM "users" WHERE "username" = ?', ['ana']);
    expect(user).toMatchObject({ username: 'ana', email: SAML_TEST_USER.mail, name: SAML_TEST_USER.displayName, given_name: SAML_TEST_USER.givenName, family_name: SAML_TEST_USER.sn });
    expect(Boolean(user.email_verified)).toBe(true);
    const links = await query<Record<string, unknown>>('SELECT "idp_id", "subject", "origin" FROM "upstream_links" WHERE "user_id" = ?', [user.id]);
    expect(links).toEqual([{ idp_id: idp, subject: SAML_TEST_USER.uid, origin: 'created' }]);
    const [session] = await query<{ upstream_sid: string | null; logout_hint: string }>('SELECT "upstream_sid", "logout_hint" FROM "upstream_sessions"');
    expect(session.upstream_sid).toMatch(/^_/);
    expect(JSON.parse(session.logout_hint)).toMatchObject({ nameId: SAML_TEST_USER.uid, nameIdFormat: 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent', sessionIndex: session.upstream_sid });
  });

  it('asks the IdP to authenticate again (ForceAuthn) when the authorization request says prompt=login', async () => {
    const idp = IDPS.redirect;
    const ssp = idps.get(idp)!;
    // A first sign-in leaves a session at the IdP: a plain second request comes straight back.
    const browser = await signIn(idp);
    const again = await browser.get(`/federation/${idp}/start`);
    expect(redirectMessage(again.location!)).not.toContain('ForceAuthn');
    expect((await atIdp(ssp, browser, again.location!)).body).toContain('name="SAMLResponse"');

    const authorize = `/authorize?${new URLSearchParams({ response_type: 'code', client_id: clientId, redirect_uri: REDIRECT_URI, scope: 'notes:read', prompt: 'login', state: 's', code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWpVy4-6B_uT0', code_challenge_method: 'S256' })}`;
    const forced = await browser.get(`/federation/${idp}/start?return_to=${encodeURIComponent(authorize)}`);
    expect(redirectMessage(forced.location!)).toContain('ForceAuthn="true"');
    // SimpleSAMLphp honours it: its login form again, despite its session.
    const page = await atIdp(ssp, browser, forced.location!);
    expect(page.body).toContain('name="AuthState"');
    const back = await postToAcs(idp, browser, await logInAtIdp(ssp, browser, page));
    expect(back.location).toBe(authorize);
  });

  describe.each(Object.entries(IDPS))('Single Logout, the IdP answering by %s', (binding, idp) => {
    /** Follows the IdP's own redirects; with the HTTP-POST binding, its form to our SLO endpoint is posted cross-site, as a browser would. */
    async function throughIdp(browser: Browser, location: string): Promise<Page> {
      const ssp = idps.get(idp)!;
      let page = await browser.get(location);
      for (let hops = 0; (page.status === 302 || page.status === 303) && page.location?.startsWith(ssp.baseUrl) && hops < 5; hops++) page = await browser.get(page.location);
      if (binding === 'redirect') return page;
      return (await postFromIdp(ssp, browser, page, sp(idp).slo)).followed;
    }

    it('signs the person out at the IdP when they sign out here: our signed LogoutRequest, its LogoutResponse back to our SLO endpoint', async () => {
      const browser = await signIn(idp);
      const csrf = /name="csrf_token" value="([^"]+)"/.exec((await browser.get('/account')).body)![1];
      const signOut = await browser.post('/logout', { csrf_token: csrf });
      expect(signOut.status).toBe(303);
      expect(signOut.location).toMatch(new RegExp(`^${idps.get(idp)!.baseUrl}/saml2/idp/SingleLogoutService\\.php\\?SAMLRequest=.*&RelayState=.*&SigAlg=.*&Signature=`));
      expect(redirectMessage(signOut.location!)).toMatch(/<samlp:LogoutRequest[^>]*>[\s\S]*<saml:NameID Format="urn:oasis:names:tc:SAML:2.0:nameid-format:persistent"[^>]*>ana<\/saml:NameID>[\s\S]*<saml2p:SessionIndex/);

      // SimpleSAMLphp checks the signature (validate.logout: our certificate is in its metadata), ends its session and answers at our SLO endpoint.
      let page = await throughIdp(browser, signOut.location!);
      if (binding === 'redirect') {
        expect(page.location!.startsWith(`${sp(idp).slo}?SAMLResponse=`)).toBe(true);
        expect(redirectMessage(page.location!)).toContain('urn:oasis:names:tc:SAML:2.0:status:Success');
        page = await browser.get(page.location!);
      }
      // On to where the sign-out was going, kept in our cookie (never taken from the IdP's RelayState).
      expect(page).toMatchObject({ status: 303, location: '/' });
      expect((await browser.get('/account')).body).not.toContain('You are signed in');
      // Its session is gone too: the next sign-in asks for the password again.
      const ssp = idps.get(idp)!;
      expect((await atIdp(ssp, browser, (await browser.get(`/federation/${idp}/start`)).location!)).body).toContain('name="AuthState"');
    });

    it('ends our session when the person signs out at the IdP (its signed LogoutRequest to our SLO endpoint), once', async () => {
      const browser = await signIn(idp);
      const ssp = idps.get(idp)!;
      // IdP-initiated logout at SimpleSAMLphp: it sends each SP of the session a LogoutRequest, then the browser to ReturnTo.
      let page = await browser.get(`${ssp.baseUrl}/saml2/idp/SingleLogoutService.php?ReturnTo=${encodeURIComponent(`${issuer.origin}/`)}`);
      for (let hops = 0; page.status === 302 && page.location?.startsWith(ssp.baseUrl) && hops < 5; hops++) page = await browser.get(page.location);
      let answer: string;
      let replay: () => Promise<number>;
      if (binding === 'redirect') {
        const request = page.location!;
        expect(request.startsWith(`${sp(idp).slo}?SAMLRequest=`)).toBe(true);
        expect(new URL(request).searchParams.get('Signature')).not.toBeNull();
        answer = (await browser.get(request)).location!;
        replay = async () => (await new Browser(issuer.origin).get(request)).status;
      } else {
        const { posted } = await postFromIdp(ssp, browser, page, sp(idp).slo);
        answer = posted.headers.get('location')!;
        const form = Object.fromEntries([...page.body.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)].map((match) => [match[1], match[2].replace(/&amp;/g, '&')]));
        replay = async () => (await fetch(sp(idp).slo, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form).toString() })).status;
      }
      // Our LogoutResponse goes back to the IdP (HTTP-Redirect), which then sends the browser to ReturnTo.
      expect(answer.startsWith(`${ssp.baseUrl}/saml2/idp/SingleLogoutService.php?SAMLResponse=`)).toBe(true);
      expect(redirectMessage(answer)).toContain('urn:oasis:names:tc:SAML:2.0:status:Success');
      const back = await browser.get(answer);
      expect(back.location).toBe(`${issuer.origin}/`);
      expect((await browser.get('/account')).body).not.toContain('You are signed in');
      const [{ details }] = await query<{ details: unknown }>('SELECT "details" FROM "audit_events" WHERE "action" = ? ORDER BY "id" DESC LIMIT 1', ['upstream.single_logout']);
      expect(typeof details === 'string' ? JSON.parse(details) : details).toEqual({ sessions_ended: 1, by: 'session_index' });
      // The same LogoutRequest again is refused (its ID is used once, on every instance).
      expect(await replay()).toBe(400);
    });
  });
});
