import { Controller, Delete, Get, HttpCode, Post, Put, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { RequireAccess, RequireScope } from '../../access/require-access.decorator.js';
import type { TokenPrincipal } from '../../access/token-principal.js';
import { jsonObjectBody } from '../../http/content-negotiation.js';
import { ClientManagementAccess, REGISTRATION_SCOPE, type ManagedClientRequest } from './registration-access.js';
import { RegistrationService, type ClientInformation } from './registration.service.js';

const JSON_TYPES = ['application/json'];

/**
 * Dynamic client registration (RFC 7591) at POST /register, for an administrator's
 * `clients:register` token, and its management (RFC 7592) at /register/{client_id}.
 */
@Controller('register')
export class RegistrationController {
  constructor(private readonly registration: RegistrationService) {}

  @Post()
  @RequireScope(REGISTRATION_SCOPE)
  async register(@Req() request: FastifyRequest & { user: TokenPrincipal }, @Res() reply: FastifyReply): Promise<void> {
    const information = await this.registration.register({ clientId: request.user.clientId, ip: request.ip }, jsonObjectBody(request, JSON_TYPES));
    send(reply.code(201).header('Location', information.registration_client_uri), information);
  }

  @Get(':clientId')
  @RequireAccess(ClientManagementAccess)
  read(@Req() request: ManagedClientRequest, @Res() reply: FastifyReply): void {
    send(reply, this.registration.read(request.managed));
  }

  @Put(':clientId')
  @RequireAccess(ClientManagementAccess)
  async update(@Req() request: ManagedClientRequest, @Res() reply: FastifyReply): Promise<void> {
    send(reply, await this.registration.update(request.managed, jsonObjectBody(request, JSON_TYPES)));
  }

  @Delete(':clientId')
  @RequireAccess(ClientManagementAccess)
  @HttpCode(204)
  async remove(@Req() request: ManagedClientRequest): Promise<void> {
    await this.registration.remove(request.managed);
  }
}

/** RFC 7591 §3.2.1: the response carries credentials, so it is never cached. */
function send(reply: FastifyReply, information: ClientInformation): void {
  void reply
    .header('Cache-Control', 'no-store')
    .header('Pragma', 'no-cache')
    .header('Content-Type', 'application/json;charset=UTF-8')
    .send(JSON.stringify(information));
}
