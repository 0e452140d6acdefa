/**
 * An OpenID Provider that lies, for the attack tests of issue 45: a real HTTP server (in the test's
 * process) with a discovery document and a JWK Set, whose token endpoint answers with an ID token
 * crafted as the test says (signed by a key it does not publish, for another audience, with another
 * nonce, expired, from another issuer). Its authorization endpoint is never visited: the test reads
 * state and nonce from the redirect to it and comes back to Latchkey's callback itself.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey } from 'jose';

export type Forgery = 'honest' | 'unpublished-key' | 'other-audience' | 'other-nonce' | 'expired' | 'other-issuer' | 'no-signature';

export class RogueOpenIdProvider {
  /** What the next token request answers with. */
  forgery: Forgery = 'honest';
  /** The nonce the ID token carries when honest: the test sets it from the authorization request it saw. */
  nonce = '';
  /** Who the ID tokens name. */
  subject = 'mallory';
  claims: Record<string, unknown> = {};
  tokenRequests = 0;

  private constructor(
    private readonly server: Server,
    readonly issuer: string,
    private readonly published: CryptoKey,
    private readonly unpublished: CryptoKey,
    readonly clientId: string,
  ) {}

  static async start(clientId: string): Promise<RogueOpenIdProvider> {
    const published = await generateKeyPair('ES256', { extractable: true });
    const unpublished = await generateKeyPair('ES256');
    const jwk = { ...(await exportJWK(published.publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
    const holder: { rogue?: RogueOpenIdProvider } = {};
    const server = createServer((request, response) => {
      void holder.rogue!.answer(request.url ?? '/', jwk).then(
        ({ status, body }) => {
          response.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
          response.end(JSON.stringify(body));
        },
        (error: Error) => {
          response.writeHead(500);
          response.end(error.message);
        },
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    holder.rogue = new RogueOpenIdProvider(server, issuer, published.privateKey, unpublished.privateKey, clientId);
    return holder.rogue;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async answer(url: string, jwk: Record<string, unknown>): Promise<{ status: number; body: unknown }> {
    const path = new URL(url, this.issuer).pathname;
    if (path === '/.well-known/openid-configuration') {
      return {
        status: 200,
        body: {
          issuer: this.issuer,
          authorization_endpoint: `${this.issuer}/authorize`,
          token_endpoint: `${this.issuer}/token`,
          userinfo_endpoint: `${this.issuer}/userinfo`,
          jwks_uri: `${this.issuer}/jwks`,
          response_types_supported: ['code'],
          subject_types_supported: ['public'],
          id_token_signing_alg_values_supported: ['ES256'],
          authorization_response_iss_parameter_supported: true,
        },
      };
    }
    if (path === '/jwks') return { status: 200, body: { keys: [jwk] } };
    if (path === '/userinfo') return { status: 200, body: { sub: this.subject, ...this.claims } };
    if (path === '/token') {
      this.tokenRequests += 1;
      return { status: 200, body: { access_token: 'rogue-access-token', token_type: 'Bearer', expires_in: 60, id_token: await this.idToken() } };
    }
    return { status: 404, body: { error: 'not_found' } };
  }

  /** A back-channel logout token (Back-Channel Logout 1.0 §2.4) as the test shapes it: signed with the published key unless `unpublished`. */
  async logoutToken(claims: Record<string, unknown>, options: { unpublished?: boolean; audience?: string } = {}): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({ events: { 'http://schemas.openid.net/event/backchannel-logout': {} }, jti: `jti-${Math.random().toString(36).slice(2)}`, ...claims })
      .setProtectedHeader({ alg: 'ES256', kid: 'k1', typ: 'logout+jwt' })
      .setIssuer(this.issuer)
      .setAudience(options.audience ?? this.clientId)
      .setIssuedAt(now)
      .setExpirationTime(now + 120)
      .sign(options.unpublished ? this.unpublished : this.published);
  }

  private async idToken(): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    const forgery = this.forgery;
    const payload = {
      sub: this.subject,
      sid: `rogue-session-of-${this.subject}`,
      nonce: forgery === 'other-nonce' ? 'a-nonce-of-another-sign-in' : this.nonce,
      ...this.claims,
    };
    const jwt = new SignJWT(payload)
      .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
      .setIssuer(forgery === 'other-issuer' ? 'https://idp.attacker.example' : this.issuer)
      .setAudience(forgery === 'other-audience' ? 'some-other-client' : this.clientId)
      .setIssuedAt(forgery === 'expired' ? now - 7200 : now)
      .setExpirationTime(forgery === 'expired' ? now - 3600 : now + 300);
    const signed = await jwt.sign(forgery === 'unpublished-key' ? this.unpublished : this.published);
    if (forgery !== 'no-signature') return signed;
    // alg none (RFC 7519 §6): the header says so and there is no signature at all.
    const [, body] = signed.split('.');
    return `${Buffer.from(JSON.stringify({ alg: 'none' })).toString('base64url')}.${body}.`;
  }
}
