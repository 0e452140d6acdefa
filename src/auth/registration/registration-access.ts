import { Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import type { ClientEditor } from '../../clients/client-change-policy.js';
import type { Client } from '../../clients/client.entity.js';
import { ClientsService } from '../../clients/clients.service.js';
import { TokenType } from '../../common/oauth.constants.js';
import { SECRET_PREFIX } from '../../common/secrets.js';
import { splitScope } from '../../common/scope.js';
import { ApiError } from '../../resources/api-error.js';
import { bearerError } from '../../resources/auth/bearer-auth.guard.js';
import { TokenKind } from '../../tokens/token.entity.js';
import { TokensService } from '../../tokens/tokens.service.js';

/** The scope an admin client's token needs to register clients (issue #4). */
export const REGISTRATION_SCOPE = 'clients:register';

/** A client under management, and who manages it. */
export interface ManagedClient {
  client: Client;
  editor: ClientEditor;
}

/**
 * Who may call the registration endpoints, decided here and nowhere else:
 * - POST /register: a client whose access token carries `clients:register` (an administrator; the
 *   token plays RFC 7591 §3's initial access token);
 * - /register/{client_id}: the client itself with its registration access token (RFC 7592 §3),
 *   whose changes ClientsService limits to narrowing; or an administrator, a `clients:register`
 *   token of another client, whose changes follow the rules of every registration. An
 *   administrator's token never manages its own client, so no client widens itself this way either.
 */
@Injectable()
export class RegistrationAccess {
  constructor(
    private readonly clients: ClientsService,
    private readonly tokens: TokensService,
  ) {}

  /** The id of the administrator client registering a new client. */
  async registrar(request: FastifyRequest): Promise<string> {
    const administrator = await this.administrator(bearerValue(request));
    if (administrator === 'invalid') throw invalidToken('The access token is invalid, expired or revoked');
    if (administrator === 'insufficient_scope') {
      throw bearerError(403, 'insufficient_scope', `Registering clients needs the scope ${REGISTRATION_SCOPE}`, { scope: REGISTRATION_SCOPE });
    }
    return administrator.clientId;
  }

  /**
   * The client in the path and its editor. An unknown client and a token that may not manage it
   * answer the same 401 to anyone but an administrator, so the endpoint reveals no client ids.
   */
  async managed(request: FastifyRequest, clientId: string): Promise<ManagedClient> {
    const value = bearerValue(request);
    if (value.startsWith(SECRET_PREFIX.registrationToken)) {
      const client = await this.clients.findByRegistrationToken(value);
      if (client?.id === clientId) return { client, editor: { kind: 'self', actor: `client:${client.id}` } };
    } else {
      const administrator = await this.administrator(value);
      if (typeof administrator === 'object' && administrator.clientId !== clientId) {
        const client = await this.clients.findById(clientId);
        if (!client) throw new ApiError(404, `No client with id "${clientId}"`);
        return { client, editor: { kind: 'administrator', actor: `client:${administrator.clientId}` } };
      }
    }
    throw invalidToken('The registration access token is not valid for this client');
  }

  /** The client whose active bearer access token this is, if it carries clients:register. */
  private async administrator(value: string): Promise<{ clientId: string } | 'invalid' | 'insufficient_scope'> {
    const token = await this.tokens.findByValue(value);
    // A MAC token is only good with its signature (draft-ietf-oauth-v2-http-mac): presented as a bearer token, it is refused.
    if (!token || token.kind !== TokenKind.Access || token.tokenType !== TokenType.Bearer || !this.tokens.isActive(token)) return 'invalid';
    return splitScope(token.scope).includes(REGISTRATION_SCOPE) ? { clientId: token.clientId } : 'insufficient_scope';
  }
}

function invalidToken(description: string): ApiError {
  return bearerError(401, 'invalid_token', description);
}

/** The token of an `Authorization: Bearer` header (RFC 6750 §2.1: scheme case-insensitive, 1*SP). */
function bearerValue(request: FastifyRequest): string {
  const match = /^bearer +([A-Za-z0-9\-._~+/]+=*)$/i.exec(request.headers.authorization ?? '');
  if (!match) {
    throw new ApiError(401, 'Send a bearer token: "Authorization: Bearer <token>"', { error: 'invalid_token', headers: { 'WWW-Authenticate': 'Bearer realm="latchkey"' } });
  }
  return match[1];
}
