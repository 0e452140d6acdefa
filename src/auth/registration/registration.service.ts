import { Inject, Injectable } from '@nestjs/common';
import type { Client } from '../../clients/client.entity.js';
import type { ClientView } from '../../clients/client-information.js';
import { ClientsService } from '../../clients/clients.service.js';
import { DomainError } from '../../common/domain-error.js';
import { generateSecret, SECRET_PREFIX, secretMatchesHash } from '../../common/secrets.js';
import { appConfig, type AppConfig } from '../../config/app.config.js';
import { parseClientMetadata } from '../../clients/client-metadata.js';
import type { ManagedClient } from './registration-access.js';

/** RFC 7591 §3.2.1 / RFC 7592 §3: the client information response. */
export type ClientInformation = ClientView & { registration_client_uri: string; registration_access_token?: string };

/**
 * Dynamic client registration (RFC 7591) and its management (RFC 7592), once the caller is known
 * to be allowed (registration-access.ts). Metadata problems are DomainErrors with RFC 7591 §3.2.2's
 * codes; what a change may contain is ClientsService's rule.
 */
@Injectable()
export class RegistrationService {
  constructor(
    private readonly clients: ClientsService,
    @Inject(appConfig.KEY) private readonly app: AppConfig,
  ) {}

  /**
   * Registers a client for an administrator (a `clients:register` token, never an owner: issue 48);
   * the response carries its secret and registration access token, shown this once.
   */
  async register(registrar: { clientId: string; ip: string }, body: Record<string, unknown>): Promise<ClientInformation> {
    const metadata = parseClientMetadata(body);
    const registrationToken = generateSecret(SECRET_PREFIX.registrationToken);
    const { client, secret } = await this.clients.create(metadata.client, { kind: 'administrator', actor: `client:${registrar.clientId}`, ip: registrar.ip }, { registrationToken });
    return { ...this.clients.toView(client, secret), registration_access_token: registrationToken, registration_client_uri: this.clientUri(client) };
  }

  read({ client }: ManagedClient): ClientInformation {
    return { ...this.clients.toView(client), registration_client_uri: this.clientUri(client) };
  }

  /** RFC 7592 §2.2: the body names the client, and a secret, if sent, must be the current one. */
  async update({ client, editor }: ManagedClient, body: Record<string, unknown>): Promise<ClientInformation> {
    const metadata = parseClientMetadata(body);
    if (metadata.clientId !== client.id) throw new DomainError('invalid_client_metadata', 'The body must carry this client\'s client_id');
    if (metadata.clientSecret !== undefined && !(client.secretHash && secretMatchesHash(metadata.clientSecret, client.secretHash))) {
      throw new DomainError('invalid_client_metadata', 'client_secret does not match; a secret cannot be chosen by the client');
    }
    return this.read({ client: await this.clients.update(client, metadata.client, editor), editor });
  }

  async remove({ client, editor }: ManagedClient): Promise<void> {
    await this.clients.delete(client.id, editor);
  }

  clientUri(client: Pick<Client, 'id'>): string {
    return `${this.app.issuer}/register/${encodeURIComponent(client.id)}`;
  }
}
