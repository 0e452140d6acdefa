/** The authorization code flow through the load balancer, for tests that need a code or a person's token. */
import { Browser } from '../../helpers/browser.js';
import { authorizeAsUser, authorizeUrl, newPkce, redirectParams } from '../../helpers/oauth-flow.js';
import type { TestUser } from '../../helpers/test-app.js';
import type { ClusterClient } from './cluster.js';
import { postAsClient } from './http.js';

export const SCOPE = 'notes:read notes:write';

/** Login (when needed), consent (when needed), Allow: a fresh code and its PKCE verifier. */
export async function obtainCode(baseUrl: string, client: ClusterClient, user: TestUser, browser = new Browser(baseUrl)): Promise<{ code: string; verifier: string }> {
  const pkce = newPkce();
  const url = authorizeUrl(client, { scope: SCOPE, state: 'cluster', code_challenge: pkce.challenge, code_challenge_method: 'S256' });
  const code = redirectParams(await authorizeAsUser(browser, user, url)).get('code');
  if (!code) throw new Error('No code in the redirect');
  return { code, verifier: pkce.verifier };
}

/** A person's access token for `client`, from the whole flow. */
export async function obtainAccessToken(baseUrl: string, client: ClusterClient, user: TestUser): Promise<string> {
  const { code, verifier } = await obtainCode(baseUrl, client, user);
  const reply = await postAsClient(baseUrl, client, '/token', { grant_type: 'authorization_code', code, redirect_uri: client.redirectUri, code_verifier: verifier });
  if (reply.status !== 200) throw new Error(`Token request failed with ${reply.status}: ${JSON.stringify(reply.body)}`);
  return String(reply.body.access_token);
}
