import { Inject, Injectable } from '@nestjs/common';
import { SignJWT } from 'jose';
import { randomUUID } from 'node:crypto';
import type { Client } from '../clients/client.entity.js';
import { Clock } from '../common/clock.js';
import { appConfig, type AppConfig } from '../config/app.config.js';
import { logoutConfig, type LogoutConfig } from '../config/logout.config.js';
import { SigningKeyRing } from '../signing/signing-key-ring.js';

/** Back-Channel Logout 1.0 §2.4: the event that makes a JWT a logout token. */
export const BACKCHANNEL_LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout';

/**
 * Signs logout tokens (Back-Channel Logout 1.0 §2.4) with the key that signs the client's ID
 * tokens: iss, aud, iat, exp, jti, events, sub and sid; never a nonce (§2.4 forbids it, so a
 * logout token cannot pass for an ID token), and typ logout+jwt (§2.4, RFC 8725 §3.11).
 */
@Injectable()
export class LogoutTokenIssuer {
  constructor(
    private readonly keys: SigningKeyRing,
    private readonly clock: Clock,
    @Inject(appConfig.KEY) private readonly app: AppConfig,
    @Inject(logoutConfig.KEY) private readonly config: LogoutConfig,
  ) {}

  issue(client: Client, subject: string, sid: string): Promise<string> {
    const alg = client.openId.idTokenSignedResponseAlg;
    const signer = this.keys.signer(alg);
    const now = Math.floor(this.clock.now().getTime() / 1000);
    return new SignJWT({ sid, events: { [BACKCHANNEL_LOGOUT_EVENT]: {} } })
      .setProtectedHeader({ alg, kid: signer.kid, typ: 'logout+jwt' })
      .setIssuer(this.app.issuer)
      .setSubject(subject)
      .setAudience(client.id)
      .setIssuedAt(now)
      .setExpirationTime(now + this.config.tokenTtlSeconds)
      .setJti(randomUUID())
      .sign(signer.privateKey);
  }
}
