import { Controller, Delete, Get, HttpCode, Inject, Param, Post, Put, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Client } from '../../clients/client.entity.js';
import { ClientsService } from '../../clients/clients.service.js';
import { DomainError } from '../../common/domain-error.js';
import { generateSecret, SECRET_PREFIX, secretMatchesHash } from '../../common/secrets.js';
import { appConfig, type AppConfig } from '../../config/app.config.js';
import { ApiError } from '../../resources/api-error.js';
import { jsonObjectBody } from '../../resources/http/content-negotiation.js';
import { parseClientMetadata } from './client-metadata.js';
import { RegistrationAccess } from './registration-access.js';

/**
 * Dynamic client registration (RFC 7591) at POST /register, for holders of a `clients:register`
 * token (client_credentials), and its management (RFC 7592) at /register/{client_id}. Who may do
 * what is RegistrationAccess's decision; what a change may contain is ClientsService's.
 */
@Controller('register')
export class RegistrationController {
  constructor(
    private readonly clients: ClientsService,
    private readonly access: RegistrationAccess,
    @Inject(appConfig.KEY) private readonly app: AppConfig,
  ) {}

  @Post()
  async register(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const registrar = await this.access.registrar(request);
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
    const { client } = await this.access.managed(request, clientId);
    this.send(reply, client);
  }

  @Put(':clientId')
  async update(@Req() request: FastifyRequest, @Res() reply: FastifyReply, @Param('clientId') clientId: string): Promise<void> {
    const { client, editor } = await this.access.managed(request, clientId);
    const metadata = guard(() => parseClientMetadata(jsonObjectBody(request, ['application/json'])));
    // RFC 7592 §2.2: the body names the client, and a secret, if sent, must be the current one.
    if (metadata.clientId !== client.id) throw new ApiError(400, 'The body must carry this client\'s client_id', { error: 'invalid_client_metadata' });
    if (metadata.clientSecret !== undefined && !(client.secretHash && secretMatchesHash(metadata.clientSecret, client.secretHash))) {
      throw new ApiError(400, 'client_secret does not match; a secret cannot be chosen by the client', { error: 'invalid_client_metadata' });
    }
    this.send(reply, await guardAsync(() => this.clients.update(client, metadata.client, editor)));
  }

  @Delete(':clientId')
  @HttpCode(204)
  async remove(@Req() request: FastifyRequest, @Param('clientId') clientId: string): Promise<void> {
    const { client, editor } = await this.access.managed(request, clientId);
    await this.clients.delete(client.id, editor.actor);
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
