import { Inject, Injectable } from '@nestjs/common';
import { compactVerify, createLocalJWKSet, type JSONWebKeySet } from 'jose';
import { appConfig, type AppConfig } from '../config/app.config.js';
import { SigningKeyRing } from '../signing/signing-key-ring.js';

/**
 * Reads an id_token_hint (OpenID Connect Core §3.1.2.1): an ID token this server issued to the
 * client, naming the person the client believes is signed in. Expired hints are accepted (the
 * person may have been away); the signature, the issuer and the audience are not negotiable.
 */
@Injectable()
export class IdTokenHintReader {
  private jwks?: { source: string; keys: ReturnType<typeof createLocalJWKSet> };

  constructor(
    private readonly ring: SigningKeyRing,
    @Inject(appConfig.KEY) private readonly app: AppConfig,
  ) {}

  /** The hint's sub, or undefined when it is not an ID token we issued to this client. */
  async subject(hint: string, clientId: string): Promise<string | undefined> {
    const read = await this.read(hint);
    return read?.audience.includes(clientId) ? read.subject : undefined;
  }

  /** What an ID token we issued says (to whom, about whom, in which session), or undefined when we did not issue it. */
  async read(hint: string): Promise<{ subject: string; audience: string[]; sid?: string } | undefined> {
    try {
      const { payload, protectedHeader } = await compactVerify(hint, this.keys());
      // A logout token (typ logout+jwt) is signed with the same keys: it is no ID token.
      if (protectedHeader.typ !== undefined && protectedHeader.typ !== 'JWT') return undefined;
      const claims = JSON.parse(new TextDecoder().decode(payload)) as { iss?: unknown; aud?: unknown; sub?: unknown; sid?: unknown };
      const audience = (Array.isArray(claims.aud) ? claims.aud : [claims.aud]).filter((value): value is string => typeof value === 'string');
      if (claims.iss !== this.app.issuer || audience.length === 0 || typeof claims.sub !== 'string') return undefined;
      return { subject: claims.sub, audience, ...(typeof claims.sid === 'string' ? { sid: claims.sid } : {}) };
    } catch {
      return undefined;
    }
  }

  /** The published keys as jose reads them, rebuilt only when the ring's JWKS changed. */
  private keys(): ReturnType<typeof createLocalJWKSet> {
    const source = this.ring.jwks();
    if (this.jwks?.source !== source) this.jwks = { source, keys: createLocalJWKSet(JSON.parse(source) as JSONWebKeySet) };
    return this.jwks.keys;
  }
}
