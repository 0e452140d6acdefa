import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import type { FastifyRequest } from 'fastify';
import passport from 'passport';
import type { Client } from '../../clients/client.entity.js';
import { Strategy } from '../../common/oauth.constants.js';
import { ClientAssertionVerifier } from './client-assertion.verifier.js';
import { ClientCredentialsVerifier } from './client-credentials.verifier.js';

type Verify = (request: FastifyRequest, done: (error: unknown, client?: Client | false | null) => void) => void;

/**
 * A passport strategy for credentials in the form body, the way passport-http is one for the
 * Authorization header: every client authentication method then runs through passport, and the
 * guard (client-authentication.guard.ts) only decides which one a request uses.
 */
class FormCredentialsStrategy extends passport.Strategy {
  constructor(private readonly verify: Verify) {
    super();
  }

  override authenticate(request: never): void {
    this.verify(request, (error, client) => {
      if (error) this.error(error);
      else if (client) this.success(client);
      else this.fail(401);
    });
  }
}

/** The form's client_id and client_secret; the guard has already checked each appears at most once. */
function formCredentials(request: FastifyRequest): { clientId?: string; secret?: string } {
  const body = (request.body ?? {}) as Record<string, unknown>;
  const text = (value: unknown) => (typeof value === 'string' && value !== '' ? value : undefined);
  return { clientId: text(body.client_id), secret: text(body.client_secret) };
}

/** client_secret_post (RFC 6749 §2.3.1): client_id and client_secret in the form body. */
@Injectable()
export class ClientSecretPostStrategy extends PassportStrategy(FormCredentialsStrategy, Strategy.ClientSecretPost) {
  constructor(private readonly verifier: ClientCredentialsVerifier) {
    super();
  }

  async validate(request: FastifyRequest): Promise<Client | false> {
    const { clientId, secret } = formCredentials(request);
    if (clientId === undefined || secret === undefined) return false;
    return (await this.verifier.verifySecret(clientId, secret)) ?? false;
  }
}

/** private_key_jwt (RFC 7523 §2.2): a client assertion in the form; the guard has checked client_assertion_type. */
@Injectable()
export class ClientPrivateKeyJwtStrategy extends PassportStrategy(FormCredentialsStrategy, Strategy.ClientPrivateKeyJwt) {
  constructor(private readonly verifier: ClientAssertionVerifier) {
    super();
  }

  async validate(request: FastifyRequest): Promise<Client | false> {
    const assertion = (request.body as Record<string, unknown> | undefined)?.client_assertion;
    if (typeof assertion !== 'string' || assertion === '') return false;
    return this.verifier.verify(assertion);
  }
}

/** none (RFC 7591 §2): a public client naming itself with client_id; PKCE proves possession instead. */
@Injectable()
export class ClientNoneStrategy extends PassportStrategy(FormCredentialsStrategy, Strategy.ClientNone) {
  constructor(private readonly verifier: ClientCredentialsVerifier) {
    super();
  }

  async validate(request: FastifyRequest): Promise<Client | false> {
    const { clientId } = formCredentials(request);
    if (clientId === undefined) return false;
    return (await this.verifier.findPublic(clientId)) ?? false;
  }
}
