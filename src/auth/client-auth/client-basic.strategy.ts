import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { BasicStrategy } from 'passport-http';
import type { Client } from '../../clients/client.entity.js';
import { Strategy } from '../../common/oauth.constants.js';
import { ClientCredentialsVerifier } from './client-credentials.verifier.js';

/**
 * client_secret_basic (RFC 6749 §2.3.1) through passport-http. The id and secret are
 * form-urlencoded before base64 encoding, so they are decoded here before the lookup.
 */
@Injectable()
export class ClientBasicStrategy extends PassportStrategy(BasicStrategy, Strategy.ClientBasic) {
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
