/**
 * A whole SP-initiated SAML sign-in at SimpleSAMLphp, as federation-saml.e2e-spec.ts walks it:
 * our /start, the IdP's login form with the test user, the IdP's auto-posting form sent to our ACS
 * cross-site (no cookie of ours with it), and the browser's GET of /complete that brings the cookie.
 */
import { Browser, type Page } from '../../helpers/browser.js';
import { SAML_TEST_USER, type SimpleSamlPhp } from './simplesamlphp.js';

/** Signs the test user in through `idpId` (served by `idp`) in a new browser; our last answer (303 to `/` when it worked). */
export async function signInAtSimpleSamlPhp(issuer: URL, idpId: string, idp: SimpleSamlPhp): Promise<{ browser: Browser; done: Page }> {
  const browser = new Browser(issuer.origin);
  let page = await browser.get((await browser.get(`/federation/${idpId}/start`)).location!);
  for (let hops = 0; (page.status === 302 || page.status === 303) && page.location && hops < 5; hops++) page = await browser.get(new URL(page.location, idp.baseUrl).href);
  const authState = /name="AuthState" value="([^"]+)"/.exec(page.body)?.[1];
  if (!authState) throw new Error(`Expected SimpleSAMLphp's login form, got ${page.status}:\n${page.body.slice(0, 2000)}\n${idp.log()}`);
  const posted = await browser.post(`${idp.baseUrl}/module.php/core/loginuserpass.php`, { username: SAML_TEST_USER.username, password: SAML_TEST_USER.password, AuthState: authState.replace(/&amp;/g, '&') });
  const action = /<form[^>]*action="([^"]+)"/.exec(posted.body)?.[1]?.replace(/&amp;/g, '&');
  if (action !== `${issuer.origin}/federation/${idpId}/saml/acs`) throw new Error(`Expected the IdP's form posting to our ACS, got ${posted.status}:\n${posted.body.slice(0, 2000)}\n${idp.log()}`);
  const fields = Object.fromEntries([...posted.body.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)].map((match) => [match[1], match[2].replace(/&amp;/g, '&').replace(/&quot;/g, '"')]));
  const acs = await fetch(action, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate', origin: idp.baseUrl },
    body: new URLSearchParams(fields).toString(),
  });
  if (acs.status !== 303) throw new Error(`Our ACS answered ${acs.status}: ${await acs.text()}`);
  return { browser, done: await browser.get(acs.headers.get('location')!) };
}
