import { Inject, Injectable } from '@nestjs/common';
import { createRemoteJWKSet, customFetch, importJWK, importPKCS8, type JWK } from 'jose';
import * as oidc from 'openid-client';
import { outboundConfig, type OutboundConfig } from '../../config/outbound.config.js';
import { readSecretReference, type SecretReference } from '../../config/secret-reference.js';
import { isAuthenticationMethod, type AuthenticationMethod } from '../../common/authentication-context.js';
import type { OidcSettings, UpstreamProvider } from '../../identity-providers/identity-provider-settings.js';
import { guardedFetch } from '../../outbound/outbound-http.js';
import type { PendingUpstreamSignIn } from '../../identity-providers/pending-upstream.js';
import type { UpstreamIdentity } from '../upstream-identity.js';
import { UpstreamFailure } from '../upstream-failure.js';

/** Discovery documents, JWK Sets, token and userinfo answers larger than this are refused. */
const MAX_ANSWER_BYTES = 256 * 1024;
/** Each upstream call is given this long (openid-client's timeout is in seconds). */
const TIMEOUT_SECONDS = 10;
/** How long a discovery document is used before it is read again. */
const DISCOVERY_TTL_MS = 10 * 60 * 1000;

/** A provider's discovery document and its last JWK Set, as read: shared by the sign-ins of one instance. */
interface KnownServer {
  /** The settings they were read for: a changed issuer or client (idps:update) reads them again. */
  settingsKey: string;
  metadata: oidc.ServerMetadata;
  fetchedAt: number;
  jwks?: oidc.ExportedJWKSCache;
}

/** What a sign-in sends upstream besides the protocol's own parameters. */
export interface UpstreamRequestOptions {
  callbackUrl: string;
  loginHint?: string;
  /** prompt=login upstream: the request here asked for a new sign-in (prompt=login, or max_age exceeded). */
  forceLogin: boolean;
  maxAge?: number;
}

/**
 * The OpenID Connect relying party that signs people in at an upstream provider (issue 45), on
 * openid-client (a certified RP library): discovery, the code flow with PKCE (RFC 7636), state and
 * nonce, RFC 9207's iss checked when the provider sends or advertises it, and the ID token
 * validated as Core §3.1.3.7 says (signature from the provider's JWK Set, iss, aud, azp, exp, iat,
 * nonce, auth_time against max_age). Every upstream call goes through the outbound guard.
 */
@Injectable()
export class UpstreamOpenIdConnect {
  private readonly servers = new Map<string, KnownServer>();
  private readonly keySets = new Map<string, { uri: string; keys: ReturnType<typeof createRemoteJWKSet> }>();
  private readonly fetch: ReturnType<typeof guardedFetch>;

  constructor(@Inject(outboundConfig.KEY) outbound: OutboundConfig) {
    this.fetch = guardedFetch(MAX_ANSWER_BYTES, { timeoutMs: TIMEOUT_SECONDS * 1000, allowPrivateNetworks: outbound.allowPrivateNetworks, extraCa: outbound.extraCa });
  }

  /** The upstream authorization URL, and what the answer must match (kept in the browser's encrypted cookie). */
  async start(provider: UpstreamProvider, settings: OidcSettings, options: UpstreamRequestOptions): Promise<{ location: string; pending: Pick<PendingUpstreamSignIn, 'state' | 'nonce' | 'codeVerifier' | 'maxAge'> }> {
    const config = await this.configuration(provider, settings);
    const codeVerifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const parameters: Record<string, string> = {
      redirect_uri: options.callbackUrl,
      scope: settings.scope,
      response_type: 'code',
      code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
      state,
      nonce,
    };
    // Core §3.1.2.1: login_hint as typed here; prompt=login and max_age so the upstream signs the person in again when we must.
    if (options.loginHint && settings.passLoginHint) parameters.login_hint = options.loginHint;
    if (options.forceLogin) parameters.prompt = 'login';
    if (options.maxAge !== undefined) parameters.max_age = String(options.maxAge);
    const location = oidc.buildAuthorizationUrl(config, parameters).href;
    return { location, pending: { state, nonce, codeVerifier, maxAge: options.maxAge } };
  }

  /**
   * The person the upstream's answer names, after every check; an UpstreamFailure when one fails
   * (a mix-up, a forged or replayed ID token, a refused code, an upstream error).
   */
  async finish(provider: UpstreamProvider, settings: OidcSettings, pending: PendingUpstreamSignIn, currentUrl: URL): Promise<UpstreamIdentity> {
    const config = await this.configuration(provider, settings);
    const upstreamError = currentUrl.searchParams.get('error');
    if (upstreamError !== null && currentUrl.searchParams.get('state') === pending.state) {
      throw new UpstreamFailure(provider, upstreamError === 'access_denied' ? 'denied' : 'upstream_error', `${provider.displayName} answered ${upstreamError.slice(0, 64)}`);
    }
    let tokens: Awaited<ReturnType<typeof oidc.authorizationCodeGrant>>;
    try {
      tokens = await oidc.authorizationCodeGrant(config, currentUrl, {
        pkceCodeVerifier: pending.codeVerifier,
        expectedState: pending.state,
        expectedNonce: pending.nonce,
        maxAge: pending.maxAge,
        idTokenExpected: true,
      });
    } catch (error) {
      throw new UpstreamFailure(provider, 'invalid_answer', describe(error));
    } finally {
      this.keepJwks(provider.id, config);
    }
    const idClaims = tokens.claims();
    if (!idClaims) throw new UpstreamFailure(provider, 'invalid_answer', 'the token response carried no ID token');
    let claims: Record<string, unknown> = { ...idClaims };
    if (settings.userinfo) {
      try {
        // Core §5.3.4: the userinfo sub must be the ID token's (fetchUserInfo checks it).
        claims = { ...(await oidc.fetchUserInfo(config, tokens.access_token, idClaims.sub)), ...idClaims };
      } catch (error) {
        throw new UpstreamFailure(provider, 'invalid_answer', `userinfo: ${describe(error)}`);
      }
    }
    const amr = Array.isArray(idClaims.amr) ? idClaims.amr.filter(isAuthenticationMethod) : [];
    const sid = typeof idClaims.sid === 'string' ? idClaims.sid : null;
    return {
      subject: idClaims.sub,
      claims,
      amr: amr as AuthenticationMethod[],
      session: { upstreamSid: sid, logoutHint: tokens.id_token ?? null },
    };
  }

  /** OpenID Connect RP-Initiated Logout §2: where to send the browser to sign out upstream, or null when the provider has no end_session_endpoint. */
  async endSessionUrl(provider: UpstreamProvider, settings: OidcSettings, idTokenHint: string | null, postLogoutRedirectUri: string, state: string): Promise<string | null> {
    const config = await this.configuration(provider, settings).catch(() => null);
    if (!config?.serverMetadata().end_session_endpoint) return null;
    const parameters: Record<string, string> = { client_id: settings.clientId, post_logout_redirect_uri: postLogoutRedirectUri, state };
    if (idTokenHint) parameters.id_token_hint = idTokenHint;
    return oidc.buildEndSessionUrl(config, parameters).href;
  }

  /** The origins of the provider's authorization and end-session endpoints: where our forms' redirects may lead (UpstreamOrigins). */
  async endpointOrigins(provider: UpstreamProvider, settings: OidcSettings): Promise<string[]> {
    const metadata = (await this.configuration(provider, settings)).serverMetadata();
    return [metadata.authorization_endpoint, metadata.end_session_endpoint].filter((url): url is string => typeof url === 'string').map((url) => new URL(url).origin);
  }

  /**
   * The provider's JWK Set and issuer, for checking what it sends us outside a sign-in (a
   * back-channel logout token): jose's remote set, read through the outbound guard, read again on
   * an unknown kid (at most every 30 s) and kept for 10 minutes.
   */
  async verificationKeys(provider: UpstreamProvider, settings: OidcSettings): Promise<{ issuer: string; keys: ReturnType<typeof createRemoteJWKSet>; algorithms?: string[] }> {
    const metadata = (await this.configuration(provider, settings)).serverMetadata();
    if (!metadata.jwks_uri) throw new UpstreamFailure(provider, 'invalid_answer', 'the discovery document names no jwks_uri');
    let known = this.keySets.get(provider.id);
    if (!known || known.uri !== metadata.jwks_uri) {
      known = { uri: metadata.jwks_uri, keys: createRemoteJWKSet(new URL(metadata.jwks_uri), { [customFetch]: this.fetch as never, timeoutDuration: TIMEOUT_SECONDS * 1000, cacheMaxAge: DISCOVERY_TTL_MS }) };
      this.keySets.set(provider.id, known);
    }
    return { issuer: metadata.issuer, keys: known.keys, algorithms: metadata.id_token_signing_alg_values_supported };
  }

  /**
   * A fresh Configuration on the known discovery document, with the provider's client
   * authentication read now (a rotated secret file applies without a restart). The JWK Set read
   * last is handed over, marked at least a minute old: a kid it does not hold (the upstream rotated
   * its keys) makes openid-client read the set again at once rather than refuse the sign-in.
   */
  private async configuration(provider: UpstreamProvider, settings: OidcSettings): Promise<oidc.Configuration> {
    const settingsKey = JSON.stringify([settings.issuer, settings.clientId]);
    let known = this.servers.get(provider.id);
    if (!known || known.settingsKey !== settingsKey || Date.now() - known.fetchedAt > DISCOVERY_TTL_MS) {
      let discovered: oidc.Configuration;
      try {
        discovered = await oidc.discovery(new URL(settings.issuer), settings.clientId, undefined, undefined, this.requestOptions(settings));
      } catch (error) {
        throw new UpstreamFailure(provider, 'unreachable', `discovery: ${describe(error)}`);
      }
      known = { settingsKey, metadata: discovered.serverMetadata(), fetchedAt: Date.now(), jwks: known?.settingsKey === settingsKey ? known.jwks : undefined };
      this.servers.set(provider.id, known);
    }
    const config = new oidc.Configuration(known.metadata, settings.clientId, undefined, await this.clientAuthentication(provider, settings));
    config[oidc.customFetch] = this.fetch as unknown as oidc.CustomFetch;
    config.timeout = TIMEOUT_SECONDS;
    if (new URL(settings.issuer).protocol === 'http:') oidc.allowInsecureRequests(config);
    // Core §3.1.3.7 step 6 lets a client trust TLS instead of the ID token's signature when it comes
    // straight from the token endpoint; openid-client does so unless asked. We check the signature
    // against the provider's keys always: an upstream's TLS terminated by a proxy, or a token
    // endpoint answering for another issuer, must not be enough.
    oidc.enableNonRepudiationChecks(config);
    if (known.jwks) oidc.setJwksCache(config, { ...known.jwks, uat: Math.min(known.jwks.uat, Math.floor(Date.now() / 1000) - 60) });
    return config;
  }

  private keepJwks(id: string, config: oidc.Configuration): void {
    const jwks = oidc.getJwksCache(config);
    const known = this.servers.get(id);
    if (jwks && known) known.jwks = jwks;
  }

  private requestOptions(settings: OidcSettings): oidc.DiscoveryRequestOptions {
    return {
      [oidc.customFetch]: this.fetch as unknown as oidc.CustomFetch,
      timeout: TIMEOUT_SECONDS,
      ...(new URL(settings.issuer).protocol === 'http:' ? { execute: [oidc.allowInsecureRequests] } : {}),
    };
  }

  private async clientAuthentication(provider: UpstreamProvider, settings: OidcSettings): Promise<oidc.ClientAuth> {
    const auth = settings.clientAuth;
    switch (auth.method) {
      case 'none':
        return oidc.None();
      case 'client_secret_basic':
        return oidc.ClientSecretBasic(this.secret(provider, auth.secret));
      case 'client_secret_post':
        return oidc.ClientSecretPost(this.secret(provider, auth.secret));
      case 'private_key_jwt':
        return oidc.PrivateKeyJwt(await privateKey(provider, this.secret(provider, auth.key)));
    }
  }

  private secret(provider: UpstreamProvider, reference: SecretReference): string {
    const read = readSecretReference(reference, process.cwd());
    if ('problem' in read) throw new UpstreamFailure(provider, 'misconfigured', read.problem);
    return read.secret;
  }
}

/** A private JWK (with its alg and kid) or a PKCS#8 PEM (RS256, or ES256 for an EC key). */
async function privateKey(provider: UpstreamProvider, text: string): Promise<oidc.PrivateKey> {
  try {
    if (text.trimStart().startsWith('{')) {
      const jwk = JSON.parse(text) as JWK;
      const alg = jwk.alg ?? (jwk.kty === 'EC' ? 'ES256' : jwk.kty === 'OKP' ? 'EdDSA' : 'RS256');
      return { key: (await importJWK(jwk, alg)) as CryptoKey, kid: jwk.kid };
    }
    const ec = /BEGIN EC PRIVATE KEY/.test(text);
    return { key: await importPKCS8(text, ec ? 'ES256' : 'RS256') };
  } catch (error) {
    throw new UpstreamFailure(provider, 'misconfigured', `the private key could not be read (${(error as Error).message})`);
  }
}

/** An upstream error as one line for the log and the audit, never a token or a secret (openid-client's messages carry neither). */
function describe(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const cause = (error as { cause?: unknown })?.cause;
  const detail = cause instanceof Error ? `: ${cause.message}` : '';
  return `${message}${detail}`.slice(0, 300);
}
