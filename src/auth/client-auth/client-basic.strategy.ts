import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { BasicStrategy } from 'passport-http';
import type { Client } from '../../clients/client.entity.js';
import { Strategy } from '../../common/oauth.constants.js';
import { ClientCredentialsVerifier } from './client-credentials.verifier.js';

/**
 * RFC 7617 §2: the user-id ends at the first colon and the password is everything after it.
 * passport-http splits at every colon and keeps only the second piece, so `id:secret:junk` passed
 * as `secret` and a secret holding a colon never matched. The colons after the first are handed on
 * as %3A, which validate() form-decodes back (RFC 6749 §2.3.1), so nothing else changes.
 */
class FirstColonBasicStrategy extends BasicStrategy {
  override authenticate(request: { headers: { authorization?: string } }, options?: object): void {
    const header = request.headers.authorization;
    const match = header === undefined ? null : /^(\S+ )(\S+)$/.exec(header);
    const credentials = match ? Buffer.from(match[2], 'base64').toString() : '';
    const first = credentials.indexOf(':');
    if (match && first >= 0 && credentials.includes(':', first + 1)) {
      const rewritten = credentials.slice(0, first + 1) + credentials.slice(first + 1).replaceAll(':', '%3A');
      request = { ...request, headers: { ...request.headers, authorization: match[1] + Buffer.from(rewritten).toString('base64') } };
    }
    super.authenticate(request as never, options);
  }
}

/**
 * client_secret_basic (RFC 6749 §2.3.1) through passport-http. The id and secret are
 * form-urlencoded before base64 encoding, so they are decoded here before the lookup.
 */
@Injectable()
export class ClientBasicStrategy extends PassportStrategy(FirstColonBasicStrategy, Strategy.ClientBasic) {
  constructor(private readonly verifier: ClientCredentialsVerifier) {
    super();
  }

  async validate(encodedId: string, encodedSecret: string): Promise<Client | false> {
    const clientId = formUrlDecode(encodedId);
    const secret = formUrlDecode(encodedSecret);
    if (clientId === undefined || secret === undefined) return false;
    return (await this.verifier.verifySecret(clientId, secret)) ?? false;
  }
}

/** application/x-www-form-urlencoded decoding ('+' is a space); undefined for malformed escapes. */
function formUrlDecode(value: string): string | undefined {
  try {
    return decodeURIComponent(value.replace(/\+/g, ' '));
  } catch {
    return undefined;
  }
}
