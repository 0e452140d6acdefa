import { Injectable } from '@nestjs/common';
import type { Client } from '../../clients/client.entity.js';
import { ClientsService } from '../../clients/clients.service.js';

/** Checks client credentials, whichever way they were presented. */
@Injectable()
export class ClientCredentialsVerifier {
  constructor(private readonly clients: ClientsService) {}

  /** The confidential client with this id and secret, or null. One lookup by primary key, one constant-time compare. */
  async verifySecret(clientId: string, secret: string): Promise<Client | null> {
    if (clientId.length > 64 || secret.length > 256) return null;
    const client = await this.clients.findById(clientId);
    return client && this.clients.secretMatches(client, secret) ? client : null;
  }

  /** The public client with this id (token_endpoint_auth_method `none`), or null. */
  async findPublic(clientId: string): Promise<Client | null> {
    if (clientId.length > 64) return null;
    const client = await this.clients.findById(clientId);
    return client?.isPublic ? client : null;
  }
}
