import { Controller, Delete, Get, HttpCode, Inject, Param, Post, Put, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Client } from '../../clients/client.entity.js';
import { ClientsService } from '../../clients/clients.service.js';
import { DomainError } from '../../common/domain-error.js';
import { TokenType } from '../../common/oauth.constants.js';
import { generateSecret, SECRET_PREFIX, secretMatchesHash } from '../../common/secrets.js';
import { splitScope } from '../../common/scope.js';
import { appConfig, type AppConfig } from '../../config/app.config.js';
import { ApiError } from '../../resources/api-error.js';
import { bearerError } from '../../resources/auth/bearer-auth.guard.js';
import { jsonObjectBody } from '../../resources/http/content-negotiation.js';
import { TokenKind } from '../../tokens/token.entity.js';
import { TokensService } from '../../tokens/tokens.service.js';
import { assertNoLegacyGrantsAdded, parseClientMetadata } from './client-metadata.js';

/** The scope an admin client's token needs to register clients (issue #4). */
export const REGISTRATION_SCOPE = 'clients:register';

/**
 * Dynamic client registration (RFC 7591) at POST /register, for holders of a `clients:register`
 * token (client_credentials), and its management (RFC 7592) at /register/{client_id} with the
 * registration access token issued at registration.
 */
@Controller('register')
export class RegistrationController {
  constructor(
    private readonly clients: ClientsService,
    private readonly tokens: TokensService,
    @Inject(appConfig.KEY) private readonly app: AppConfig,
  ) {}

  @Post()
  async register(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const registrar = await this.registrar(request);
    const metadata = guard(() => parseClientMetadata(jsonObjectBody(request, ['application/json'])));
    const registrationToken = generateSecret(SECRET_PREFIX.registrationToken);
    const { client, secret } = await guardAsync(() => this.clients.create(metadata.client, `client:${registrar}`, { registrationToken }));
    void reply
      .code(201)
      .header('Cache-Control', 'no-store')
      .header('Pragma', 'no-cache')
      .header('Location', this.clientUri(client))
      .header('Content-Type', 'application/json;charset=UTF-8')
      .send(JSON.stringify({ ...this.clients.toView(client, secret), registration_access_token: registrationToken, registration_client_uri: this.clientUri(client) }));
  }

  @Get(':clientId')
  async read(@Req() request: FastifyRequest, @Res() reply: FastifyReply, @Param('clientId') clientId: string): Promise<void> {
    const client = await this.managed(request, clientId);
    this.send(reply, client);
  }

  @Put(':clientId')
  async update(@Req() request: FastifyRequest, @Res() reply: FastifyReply, @Param('clientId') clientId: string): Promise<void> {
    const client = await this.managed(request, clientId);
    const metadata = guard(() => parseClientMetadata(jsonObjectBody(request, ['application/json'])));
    // RFC 7592 §2.2: the body names the client, and a secret, if sent, must be the current one.
    if (metadata.clientId !== client.id) throw new ApiError(400, 'The body must carry this client\'s client_id', { error: 'invalid_client_metadata' });
    if (metadata.clientSecret !== undefined && !(client.secretHash && secretMatchesHash(metadata.clientSecret, client.secretHash))) {
      throw new ApiError(400, 'client_secret does not match; a secret cannot be chosen by the client', { error: 'invalid_client_metadata' });
    }
    guard(() => assertNoLegacyGrantsAdded(metadata.client.grantTypes ?? [], client.grantTypes));
    this.send(reply, await guardAsync(() => this.clients.update(client, metadata.client, `client:${client.id}`)));
  }

  @Delete(':clientId')
  @HttpCode(204)
  async remove(@Req() request: FastifyRequest, @Param('clientId') clientId: string): Promise<void> {
    const client = await this.managed(request, clientId);
    await this.clients.delete(client.id, `client:${client.id}`);
  }

  private send(reply: FastifyReply, client: Client): void {
    void reply
      .header('Cache-Control', 'no-store')
      .header('Pragma', 'no-cache')
      .header('Content-Type', 'application/json;charset=UTF-8')
      .send(JSON.stringify({ ...this.clients.toView(client), registration_client_uri: this.clientUri(client) }));
  }

  private clientUri(client: Client): string {
    return `${this.app.issuer}/register/${encodeURIComponent(client.id)}`;
  }

  /** The id of the client whose active access token carries clients:register (RFC 7591 §3: an initial access token). */
  private async registrar(request: FastifyRequest): Promise<string> {
    const value = bearerValue(request);
    const token = await this.tokens.findByValue(value);
    // A MAC token is only good with its signature (draft-ietf-oauth-v2-http-mac): presented as a bearer token, it is refused.
    if (!token || token.kind !== TokenKind.Access || token.tokenType !== TokenType.Bearer || !this.tokens.isActive(token)) {
      throw bearerError(401, 'invalid_token', 'The access token is invalid, expired or revoked');
    }
    if (!splitScope(token.scope).includes(REGISTRATION_SCOPE)) {
      throw bearerError(403, 'insufficient_scope', `Registering clients needs the scope ${REGISTRATION_SCOPE}`, { scope: REGISTRATION_SCOPE });
    }
    return token.clientId;
  }

  /**
   * RFC 7592 §3: the registration access token must belong to the client in the path. An unknown
   * client and a wrong token answer the same 401, so the endpoint reveals no client ids.
   */
  private async managed(request: FastifyRequest, clientId: string): Promise<Client> {
    const client = await this.clients.findByRegistrationToken(bearerValue(request));
    if (!client || client.id !== clientId) throw bearerError(401, 'invalid_token', 'The registration access token is not valid for this client');
    return client;
  }
}

/** The token of an `Authorization: Bearer` header (RFC 6750 §2.1: scheme case-insensitive, 1*SP). */
function bearerValue(request: FastifyRequest): string {
  const match = /^bearer +([A-Za-z0-9\-._~+/]+=*)$/i.exec(request.headers.authorization ?? '');
  if (!match) {
    throw new ApiError(401, 'Send a bearer token: "Authorization: Bearer <token>"', { error: 'invalid_token', headers: { 'WWW-Authenticate': 'Bearer realm="latchkey"' } });
  }
  return match[1];
}

/** RFC 7591 §3.2.2: metadata problems are 400 with their own error codes. */
function guard<T>(work: () => T): T {
  try {
    return work();
  } catch (error) {
    throw asRegistrationError(error);
  }
}

async function guardAsync<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw asRegistrationError(error);
  }
}

function asRegistrationError(error: unknown): unknown {
  return error instanceof DomainError ? new ApiError(400, error.message, { error: error.code }) : error;
}
