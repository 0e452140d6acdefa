import { Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { AccessDenied } from '../../access/access-denied.js';
import type { AccessRequirement } from '../../access/access-requirement.js';
import type { Principal } from '../../access/token-principal.js';
import { holdsOwnerOnlyScope, type ClientEditor } from '../../clients/client-change-policy.js';
import type { Client } from '../../clients/client.entity.js';
import { ClientsService } from '../../clients/clients.service.js';
import { ApiError } from '../../http/api-error.js';

/** The scope an administrator's token needs to register and manage clients (issue #4). */
export const REGISTRATION_SCOPE = 'clients:register';

/** A client under management, and who manages it. */
export interface ManagedClient {
  client: Client;
  editor: ClientEditor;
}

export type ManagedClientRequest = FastifyRequest & { managed: ManagedClient };

/**
 * Who may manage the client of /register/{client_id}, decided here and nowhere else (POST
 * /register itself declares @RequireScope(REGISTRATION_SCOPE): an administrator, whose token
 * plays RFC 7591 §3's initial access token):
 * - the client itself with its registration access token (RFC 7592 §3), whose changes
 *   ClientsService limits to narrowing;
 * - or an administrator, a `clients:register` token of another client, whose changes follow the
 *   rules of every registration. An administrator's token never manages its own client, so no
 *   client widens itself this way either.
 * An unknown client and a token that may not manage it answer the same 401 to anyone but an
 * administrator, so the endpoint reveals no client ids.
 */
@Injectable()
export class ClientManagementAccess implements AccessRequirement {
  constructor(private readonly clients: ClientsService) {}

  async check(principal: Principal, request: FastifyRequest): Promise<void> {
    const clientId = (request.params as Record<string, string>).clientId;
    (request as ManagedClientRequest).managed = await this.managed(principal, clientId, request.ip);
  }

  private async managed(principal: Principal, clientId: string, ip: string): Promise<ManagedClient> {
    if (principal.kind === 'registration_access_token' && principal.clientId === clientId) {
      return { client: principal.client, editor: { kind: 'self', actor: `client:${clientId}`, ip } };
    }
    if (principal.kind === 'access_token' && principal.scopes.has(REGISTRATION_SCOPE) && principal.clientId !== clientId) {
      const client = await this.clients.findById(clientId);
      if (!client) throw new ApiError(404, `No client with id "${clientId}"`);
      // Issue 48: a client holding an owner-only scope (an admin scope, scim) is an owner's to manage, never a clients:register token's (its GET included: it would show the redirect URIs to move).
      if (holdsOwnerOnlyScope(client.scope)) throw new ApiError(403, 'This client holds an owner-only scope; only an owner manages it (the admin API with admin:owner, or the CLI)', { error: 'admin_client_protected' });
      return { client, editor: { kind: 'administrator', actor: `client:${principal.clientId}`, ip } };
    }
    throw new AccessDenied({ error: 'invalid_token', description: 'The registration access token is not valid for this client' }, principal.scheme);
  }
}
