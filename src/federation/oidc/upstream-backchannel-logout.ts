import { Injectable, Logger } from '@nestjs/common';
import { errors, jwtVerify } from 'jose';
import { AuditService } from '../../audit/audit.service.js';
import { Clock } from '../../common/clock.js';
import { UPSTREAM_PROTOCOL } from '../../identity-providers/identity-provider-settings.js';
import { IdentityProvidersService } from '../../identity-providers/identity-providers.service.js';
import { JtiUseStore } from '../../replay/jti-use.store.js';
import { SessionsService } from '../../sessions/sessions.service.js';
import { UpstreamSessionStore } from '../../identity-providers/upstream-session.store.js';
import { UpstreamOpenIdConnect } from './upstream-openid-connect.js';

/** OpenID Connect Back-Channel Logout 1.0 §2.4: the event a logout token carries. */
const BACKCHANNEL_LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout';
/** How old a logout token may be (its iat) when it arrives: the upstream sends it as the session ends. */
const MAX_TOKEN_AGE_SECONDS = 300;

export type BackchannelAnswer = { status: 200; ended: number } | { status: 400; error: 'invalid_request'; description: string };

/**
 * The upstream provider's back-channel logout (OpenID Connect Back-Channel Logout 1.0 §2.5-§2.8):
 * a logout token, validated as §2.6 says (signature from the provider's keys, iss, aud our client
 * id, iat, jti used once on every instance, the event, a sub or a sid, no nonce), ends the sessions
 * that provider's sign-in started here (by its sid when it gives one, else every one of its sub),
 * and with them, through the sessions' end listeners, our own relying parties' sessions.
 */
@Injectable()
export class UpstreamBackchannelLogout {
  private readonly logger = new Logger('Federation');

  constructor(
    private readonly providers: IdentityProvidersService,
    private readonly openIdConnect: UpstreamOpenIdConnect,
    private readonly upstreamSessions: UpstreamSessionStore,
    private readonly sessions: SessionsService,
    private readonly jtiUses: JtiUseStore,
    private readonly audit: AuditService,
    private readonly clock: Clock,
  ) {}

  async receive(idpId: string, logoutToken: unknown): Promise<BackchannelAnswer> {
    const refuse = (description: string): BackchannelAnswer => {
      this.logger.warn(`back-channel logout from ${idpId.slice(0, 64)} refused: ${description}`);
      return { status: 400, error: 'invalid_request', description };
    };
    // A disabled provider's logout still ends the sessions it started.
    const provider = await this.providers.find(idpId);
    if (!provider || provider.settings.protocol !== UPSTREAM_PROTOCOL.OpenIdConnect) return refuse('no OpenID Connect provider here by that name');
    if (typeof logoutToken !== 'string' || logoutToken.length === 0 || logoutToken.length > 8192) return refuse('logout_token is required (§2.5)');
    const settings = provider.settings;
    let claims: Record<string, unknown>;
    try {
      const { issuer, keys, algorithms } = await this.openIdConnect.verificationKeys(provider, settings);
      ({ payload: claims } = await jwtVerify(logoutToken, keys, {
        issuer,
        audience: settings.clientId,
        algorithms: algorithms?.filter((alg) => alg !== 'none'),
        maxTokenAge: MAX_TOKEN_AGE_SECONDS,
        requiredClaims: ['iat', 'jti', 'events'],
        currentDate: this.clock.now(),
        clockTolerance: 30,
      }));
    } catch (error) {
      return refuse(error instanceof errors.JOSEError ? `the logout token is not valid: ${error.message}` : 'the provider\'s keys could not be read');
    }
    const events = claims.events as Record<string, unknown> | undefined;
    if (typeof events !== 'object' || events === null || typeof events[BACKCHANNEL_LOGOUT_EVENT] !== 'object') return refuse('the logout token has no back-channel logout event (§2.4)');
    if (claims.nonce !== undefined) return refuse('a logout token must not carry a nonce (§2.4)');
    const sid = typeof claims.sid === 'string' ? claims.sid : undefined;
    const sub = typeof claims.sub === 'string' ? claims.sub : undefined;
    if (sid === undefined && sub === undefined) return refuse('the logout token names neither a sub nor a sid (§2.4)');
    // §2.6 item 9 (jti): a logout token is accepted once, on any instance.
    const expiresAt = new Date((Number(claims.iat) + MAX_TOKEN_AGE_SECONDS + 60) * 1000);
    if (!(await this.jtiUses.use('upstream_logout_token', `${provider.id}`, String(claims.jti), expiresAt))) return refuse('this logout token was used already');
    const sessionIds = await this.upstreamSessions.sessionsOf(provider.id, { upstreamSid: sid, subject: sub });
    const ended = await this.sessions.endRows(sessionIds);
    this.logger.log(`back-channel logout from ${provider.id}: ${ended} session(s) ended`);
    await this.audit.record({ actor: `idp:${provider.id}`, action: 'upstream.backchannel_logout', subject: `idp:${provider.id}`, details: { sessions_ended: ended, by: sid !== undefined ? 'sid' : 'sub' } });
    return { status: 200, ended };
  }
}
