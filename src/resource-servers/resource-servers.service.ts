import { Inject, Injectable } from '@nestjs/common';
import { uuidv7 } from '../common/random.js';
import { AuditService } from '../audit/audit.service.js';
import { ClientsService } from '../clients/clients.service.js';
import { absoluteUriProblem } from '../clients/redirect-uri.policy.js';
import { DomainError } from '../common/domain-error.js';
import { appConfig, type AppConfig } from '../config/app.config.js';
import type { KeysetPage } from '../database/keyset-page.js';
import { Transactions } from '../database/transactions.js';
import { introspectionRefusal } from './introspector.js';
import { AccessTokenFormat, ResourceServer } from './resource-server.entity.js';
import { ResourceServerStore } from './resource-server.store.js';

/** What the CLI and the admin API show of a resource server. */
export interface ResourceServerView {
  /** The admin API names it by this id (a URI may be 2,000 characters; the CLI names it by URI). */
  id: string;
  uri: string;
  name: string;
  access_token_format: AccessTokenFormat;
  /** The client it introspects with (RFC 7662), the only one that sees its tokens; null when none. */
  introspector: string | null;
  created_at: string;
}

/**
 * The resource servers tokens can be restricted to (RFC 8707): registered by an administrator,
 * looked up by URI when a request names them. Latchkey's own APIs (the data API, userinfo,
 * registration management) are the resource named by the issuer itself.
 */
@Injectable()
export class ResourceServersService {
  readonly localResource: string;

  constructor(
    private readonly servers: ResourceServerStore,
    private readonly audit: AuditService,
    private readonly clients: ClientsService,
    private readonly transactions: Transactions,
    @Inject(appConfig.KEY) app: AppConfig,
  ) {
    this.localResource = app.issuer;
  }

  /**
   * `introspector`: the client id this resource server introspects with (a confidential client
   * holding tokens:introspect). `ip`: where the change came from, over HTTP (the audit trail).
   */
  async register(input: { uri: string; name?: string; accessTokenFormat?: string; introspector?: string }, actor: string, ip?: string): Promise<ResourceServer> {
    const { uri } = input;
    const parts = uri.length > 2000 ? { problem: 'is longer than 2000 characters' } : absoluteUriProblem(uri);
    if ('problem' in parts) throw new DomainError('invalid_resource', `The resource URI ${JSON.stringify(uri)} ${parts.problem}.`);
    // RFC 8707 §2: an absolute URI that MUST NOT include a fragment.
    if (uri.includes('#')) throw new DomainError('invalid_resource', 'A resource URI must not contain a fragment (RFC 8707 §2).');
    if (uri === this.localResource) throw new DomainError('invalid_resource', `${uri} is Latchkey's own APIs, a resource already.`);
    const format = input.accessTokenFormat ?? AccessTokenFormat.Opaque;
    if (format !== AccessTokenFormat.Opaque && format !== AccessTokenFormat.Jwt) throw new DomainError('invalid_resource', 'The access token format is "opaque" or "jwt".');
    const name = (input.name ?? uri).trim();
    if (name.length === 0 || name.length > 200) throw new DomainError('invalid_resource', 'The name must be 1 to 200 characters.');
    if (await this.servers.existsWithUri(uri)) throw new DomainError('invalid_resource', `A resource server with the URI ${uri} is registered already.`);
    const introspector = input.introspector ?? null;
    if (introspector !== null) {
      const client = await this.clients.findById(introspector);
      if (!client) throw new DomainError('invalid_resource', `No client with the id ${JSON.stringify(introspector)} to introspect with.`);
      const refusal = introspectionRefusal(client);
      if (refusal) throw new DomainError('invalid_resource', `The client ${introspector} cannot introspect: ${refusal}.`);
    }
    const server = Object.assign(new ResourceServer(), { id: uuidv7(), uri, name, accessTokenFormat: format, introspectionClientId: introspector });
    return this.transactions.run(async (manager) => {
      const saved = await this.servers.save(server, manager);
      // The subject names the row by its id: a URI may be 2,000 characters, more than an audit subject holds.
      await this.audit.record({ actor: { actor, ip }, action: 'resource_server.registered', subject: `resource_server:${saved.id}`, details: { uri, name, access_token_format: format, introspector } }, manager);
      return saved;
    });
  }

  list(): Promise<ResourceServer[]> {
    return this.servers.list();
  }

  /** A page by name then id (the admin API's list). */
  page(page: KeysetPage): Promise<ResourceServer[]> {
    return this.servers.page(page);
  }

  /**
   * Removes a registration, named by its URI (the CLI) or its id (the admin API); tokens already
   * restricted to it keep their audience until they expire.
   */
  async remove(which: { uri: string } | { id: string }, actor: string, ip?: string): Promise<void> {
    await this.transactions.run(async (manager) => {
      const server = await this.servers.delete(which, manager);
      if (!server) throw new DomainError('resource_server_not_found', 'uri' in which ? `No resource server with the URI ${which.uri}.` : `No resource server with the id ${JSON.stringify(which.id)}.`);
      await this.audit.record({ actor: { actor, ip }, action: 'resource_server.deleted', subject: `resource_server:${server.id}`, details: { uri: server.uri } }, manager);
    });
  }

  /** The registered servers among `uris`, in one indexed read. */
  findByUris(uris: readonly string[]): Promise<ResourceServer[]> {
    return this.servers.findByUris(uris);
  }

  view(server: ResourceServer): ResourceServerView {
    return { id: server.id, uri: server.uri, name: server.name, access_token_format: server.accessTokenFormat, introspector: server.introspectionClientId, created_at: server.createdAt.toISOString() };
  }
}
