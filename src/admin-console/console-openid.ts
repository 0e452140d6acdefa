import { Inject, Injectable, Logger } from '@nestjs/common';
import * as oidc from 'openid-client';
import { acrAtLeast, isAcr } from '../common/authentication-context.js';
import { Clock } from '../common/clock.js';
import { adminConsoleConfig, type AdminConsoleConfig } from '../config/admin-console.config.js';
import { appConfig, type AppConfig } from '../config/app.config.js';
import { CONSOLE_SCOPE, ConsoleClient } from './console-client.js';
import type { PendingSignIn } from './console-cookie.js';
import { ConsoleRefusal } from './console-errors.js';
import { InProcessHttp } from './in-process-http.js';

/** What a sign-in or a refresh gives the console (times in epoch seconds). */
export interface ConsoleTokens {
  sub: string;
  accessToken: string;
  refreshToken?: string;
  idToken?: string;
  expiresAt: number;
  authTime: number;
}

/**
 * The console as an OpenID Connect relying party of its own server, on openid-client (a certified
 * RP library): the code flow with PKCE (RFC 7636), state and nonce, the ID token checked as Core
 * §3.1.3.7 says, refreshes, revocation (RFC 7009) and RP-Initiated Logout. Every request goes to
 * this server in-process (InProcessHttp) as the administrator's, so the tokens are the token
 * endpoint's own, issued under every rule any client's are.
 */
@Injectable()
export class ConsoleOpenId {
  private readonly logger = new Logger(ConsoleOpenId.name);
  private metadata?: Promise<oidc.ServerMetadata>;

  constructor(
    private readonly http: InProcessHttp,
    private readonly client: ConsoleClient,
    private readonly clock: Clock,
    @Inject(appConfig.KEY) private readonly app: AppConfig,
    @Inject(adminConsoleConfig.KEY) private readonly config: AdminConsoleConfig,
  ) {}

  /**
   * The authorization request, and what its answer must match. acr_values asks for
   * ADMIN_CONSOLE_ACR (the client's minimum_acr holds it anyway); a re-authentication asks for a
   * new sign-in (prompt=login, max_age=0: Core §3.1.2.1).
   */
  async start(remoteAddress: string, returnTo: string, reauthenticate: boolean): Promise<{ location: string; pending: PendingSignIn }> {
    const config = await this.configuration(remoteAddress);
    const codeVerifier = oidc.randomPKCECodeVerifier();
    const pending: PendingSignIn = { state: oidc.randomState(), nonce: oidc.randomNonce(), codeVerifier, returnTo, reauthenticate, at: this.nowSeconds() };
    const parameters: Record<string, string> = {
      redirect_uri: this.client.callbackUrl,
      scope: CONSOLE_SCOPE,
      response_type: 'code',
      code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
      state: pending.state,
      nonce: pending.nonce,
      acr_values: this.config.acr,
      ...(reauthenticate ? { prompt: 'login', max_age: '0' } : {}),
    };
    return { location: oidc.buildAuthorizationUrl(config, parameters).href, pending };
  }

  /** The tokens of the answer at /admin/callback, after every check; a ConsoleRefusal when one fails. */
  async finish(remoteAddress: string, currentUrl: URL, pending: PendingSignIn): Promise<ConsoleTokens> {
    const config = await this.configuration(remoteAddress);
    let tokens: Awaited<ReturnType<typeof oidc.authorizationCodeGrant>>;
    try {
      tokens = await oidc.authorizationCodeGrant(config, currentUrl, { pkceCodeVerifier: pending.codeVerifier, expectedState: pending.state, expectedNonce: pending.nonce, idTokenExpected: true });
    } catch (error) {
      throw signInFailed(describe(error));
    }
    const claims = tokens.claims()!;
    const authTime = typeof claims.auth_time === 'number' ? claims.auth_time : 0;
    // The token endpoint held the sign-in to the client's floor already; checked again here, the console's own rule.
    if (typeof claims.acr !== 'string' || !isAcr(claims.acr) || !acrAtLeast(claims.acr, this.config.acr)) throw signInFailed(`the sign-in did not reach ${this.config.acr}`);
    // A re-authentication must be a sign-in made after it was asked for, not the session's old one.
    if (pending.reauthenticate && authTime < pending.at) throw signInFailed('the sign-in is older than the request for a new one');
    return { sub: claims.sub, ...this.fromResponse(tokens), authTime };
  }

  /** A new access token (and refresh token, when the server rotates it); null when the refresh is refused (revoked, expired, the floor no longer met). */
  async refresh(remoteAddress: string, refreshToken: string): Promise<Omit<ConsoleTokens, 'sub' | 'authTime' | 'idToken'> | null> {
    try {
      const tokens = await oidc.refreshTokenGrant(await this.configuration(remoteAddress), refreshToken);
      return this.fromResponse(tokens);
    } catch (error) {
      if (error instanceof oidc.ResponseBodyError) return null;
      throw error;
    }
  }

  /** RFC 7009: revokes the tokens, so that no copy of the console's cookie works on any instance. A failure is logged, not shown: the cookie goes anyway. */
  async revoke(remoteAddress: string, tokens: readonly (string | undefined)[]): Promise<void> {
    const config = await this.configuration(remoteAddress);
    for (const token of tokens) {
      if (token === undefined) continue;
      await oidc.tokenRevocation(config, token).catch((error: unknown) => this.logger.warn(`Revoking a console token failed: ${describe(error)}`));
    }
  }

  /** RP-Initiated Logout 1.0 §2: signs the administrator out of the server too, then back to the console's signed-out page. */
  async endSessionUrl(remoteAddress: string, idToken: string): Promise<string> {
    const config = await this.configuration(remoteAddress);
    return oidc.buildEndSessionUrl(config, { id_token_hint: idToken, post_logout_redirect_uri: this.client.signedOutUrl }).href;
  }

  private fromResponse(tokens: oidc.TokenEndpointResponse): Omit<ConsoleTokens, 'sub' | 'authTime'> {
    return { accessToken: tokens.access_token, refreshToken: tokens.refresh_token, idToken: tokens.id_token, expiresAt: this.nowSeconds() + (tokens.expires_in ?? 300) };
  }

  /** A Configuration for one operation, fetching as `remoteAddress`; openid-client's clock is ours (Clock), so its time checks agree with the server's. */
  private async configuration(remoteAddress: string): Promise<oidc.Configuration> {
    const { clientId, secret } = await this.client.credentials();
    const skew = Math.round((this.clock.now().getTime() - Date.now()) / 1000);
    const config = new oidc.Configuration(await this.serverMetadata(), clientId, { [oidc.clockSkew]: skew }, oidc.ClientSecretBasic(secret));
    config[oidc.customFetch] = this.http.fetchFor(remoteAddress) as unknown as oidc.CustomFetch;
    if (this.app.issuer.startsWith('http:')) oidc.allowInsecureRequests(config);
    return config;
  }

  /** Our own discovery document, read once per process, in-process. */
  private serverMetadata(): Promise<oidc.ServerMetadata> {
    if (this.metadata === undefined) {
      const options: oidc.DiscoveryRequestOptions = { [oidc.customFetch]: this.http.fetchFor('127.0.0.1') as unknown as oidc.CustomFetch, ...(this.app.issuer.startsWith('http:') ? { execute: [oidc.allowInsecureRequests] } : {}) };
      this.metadata = oidc.discovery(new URL(this.app.issuer), 'discovery', undefined, undefined, options).then((config) => config.serverMetadata());
      this.metadata.catch(() => (this.metadata = undefined));
    }
    return this.metadata;
  }

  private nowSeconds(): number {
    return Math.floor(this.clock.now().getTime() / 1000);
  }
}

function signInFailed(reason: string): ConsoleRefusal {
  return new ConsoleRefusal(400, 'Sign-in failed', `The sign-in to the admin console could not be completed: ${reason}.`, { retryUrl: '/admin' });
}

/** openid-client's message (and the server's error), never a token or a secret: its messages carry neither. */
function describe(error: unknown): string {
  if (error instanceof oidc.ResponseBodyError || error instanceof oidc.AuthorizationResponseError) return `${error.error}${error.error_description ? ` (${error.error_description})` : ''}`;
  return (error instanceof Error ? error.message : String(error)).slice(0, 300);
}
