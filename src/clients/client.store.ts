import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { Brackets, In, type DataSource, type EntityManager } from 'typeorm';
import { databaseConfig, type DatabaseConfig } from '../config/database.config.js';
import { CHANGE_CHANNELS } from '../database/change-channels.js';
import { ChangeNotifications } from '../database/change-notifications.js';
import { EntityRows } from '../database/entity-rows.js';
import { EVERY_ROW, type NotifiedCache } from '../database/notified-cache.js';
import { RowCaches } from '../database/row-caches.js';
import { dateParameter, execute, PreparedStatement } from '../database/prepared-statement.js';
import { escapeLike, type KeysetPage } from '../database/keyset-page.js';
import { ClientAuthMethod, type GrantType } from '../common/oauth.constants.js';
import { Client } from './client.entity.js';

/** What the admin API's client list may be narrowed to: every condition given must hold. */
export interface ClientFilter {
  /** A piece of the client id or of the name, ignoring case. */
  text?: string;
  grantType?: GrantType;
  kind?: 'public' | 'confidential';
}

/** The channel the clients table's trigger notifies with a client's id (migration ChangeNotifications1765000000000). */
export const CLIENT_CHANGES_CHANNEL = CHANGE_CHANNELS.clients;

/**
 * The clients table. The lookup by id runs on every authenticated /token, /introspect and
 * /revoke, so it is a prepared statement, kept per instance on PostgreSQL (NotifiedCache; bench/RESULTS.md); registration and the CLI, which are
 * rare, use TypeORM's entity manager. Writes take the caller's manager: a client's change and its
 * audit event commit together (ClientsService runs them through Transactions). Every write tells
 * ChangeNotifications what it changes (committing), so that this instance drops what it keeps of it
 * the moment it commits: the writer does not wait for its own notification.
 */
@Injectable()
export class ClientStore {
  private readonly rows: EntityRows<Client>;
  private readonly byId: PreparedStatement<Record<string, unknown>>;

  /** PostgreSQL: rows kept per instance, dropped on every change (NotifiedCache says why that is safe). */
  private readonly cache: NotifiedCache;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly notifications: ChangeNotifications,
    @Inject(databaseConfig.KEY) config: DatabaseConfig,
    rowCaches: RowCaches,
  ) {
    this.rows = new EntityRows(dataSource.getMetadata(Client));
    this.byId = new PreparedStatement(dataSource, 'latchkey_client_by_id', `SELECT ${this.rows.selectList} FROM ${this.rows.table} WHERE "id" = ?`);
    this.cache = rowCaches.create('clients', CLIENT_CHANGES_CHANNEL, config.clientCacheMb);
  }

  /** On PostgreSQL from the instance's cache when it holds the client. */
  async findById(clientId: string): Promise<Client | null> {
    const row = await this.cache.row(clientId, () => this.byId.one(clientId));
    return row ? this.rows.decode(row) : null;
  }

  /** Whether the client is stored now, read from the database and never from the cache: after a write that named it failed (isForeignKeyViolation). */
  async existsNow(clientId: string): Promise<boolean> {
    return (await this.byId.one(clientId)) !== undefined;
  }

  /** One indexed lookup by the registration access token's hash. */
  findByRegistrationTokenHash(registrationTokenHash: string): Promise<Client | null> {
    return this.dataSource.manager.findOneBy(Client, { registrationTokenHash });
  }

  list(): Promise<Client[]> {
    return this.dataSource.manager.find(Client, { order: { createdAt: 'ASC' } });
  }

  /**
   * A page of the clients matching `filter`, by name then id (the keyset: the name is not unique).
   * grant_types is stored as a JSON array, so a grant type is found as its quoted string in it.
   */
  search(filter: ClientFilter, page: KeysetPage): Promise<Client[]> {
    const query = this.dataSource.manager.createQueryBuilder(Client, 'client');
    if (filter.text !== undefined) {
      const text = `%${escapeLike(filter.text.toLowerCase())}%`;
      query.andWhere(new Brackets((either) => either.where("LOWER(client.name) LIKE :text ESCAPE '\\'").orWhere("LOWER(client.id) LIKE :text ESCAPE '\\'")), { text });
    }
    if (filter.grantType !== undefined) query.andWhere("client.grantTypes LIKE :grant ESCAPE '\\'", { grant: `%${escapeLike(JSON.stringify(filter.grantType))}%` });
    if (filter.kind !== undefined) query.andWhere(`client.tokenEndpointAuthMethod ${filter.kind === 'public' ? '=' : '<>'} :none`, { none: ClientAuthMethod.None });
    if (page.after !== null) {
      query.andWhere('(client.name > :name OR (client.name = :name AND client.id > :id))', { name: page.after.value, id: page.after.id });
    }
    return query.orderBy('client.name', 'ASC').addOrderBy('client.id', 'ASC').limit(page.limit + 1).getMany();
  }

  /** A new client or a changed one, as it was stored (created_at and updated_at filled in). */
  async save(client: Client, manager: EntityManager): Promise<Client> {
    const saved = await manager.save(client);
    this.notifications.committing(manager, CHANGE_CHANNELS.clients, client.id);
    return saved;
  }

  /**
   * Deletes the client; its codes, tokens and consents go with it (ON DELETE CASCADE). The tokens
   * other clients obtained by exchanging its tokens (RFC 8693; TokenStore's parent_id) are of other
   * clients, so no cascade reaches them: they are revoked first, at any depth, as TokenStore revokes
   * the descendants of a revoked token (the tokens table cannot be imported here: tokens name their client).
   */
  async delete(clientId: string, now: Date, manager: EntityManager): Promise<void> {
    const exchanged = `WITH RECURSIVE "chain"("id") AS (SELECT "id" FROM "tokens" WHERE "parent_id" IN (SELECT "id" FROM "tokens" WHERE "client_id" = ?) UNION SELECT "t"."id" FROM "tokens" "t" JOIN "chain" "c" ON "t"."parent_id" = "c"."id") UPDATE "tokens" SET "revoked_at" = ? WHERE "id" IN (SELECT "id" FROM "chain") AND "revoked_at" IS NULL`;
    await execute(manager, exchanged, [clientId, dateParameter(now, this.dataSource.options.type)]);
    await manager.delete(Client, { id: clientId });
    this.notifications.committing(manager, CHANGE_CHANNELS.clients, clientId);
    // Its access tokens are kept by their hash, which this statement never saw: all of them go.
    this.notifications.committing(manager, CHANGE_CHANNELS.tokens, EVERY_ROW);
  }

  /** Every client's id and redirect URIs, and nothing else: what the allowed browser origins are made of (src/cors/). */
  async redirectUrisOfAll(): Promise<{ id: string; redirectUris: string[] }[]> {
    const clients = await this.dataSource.manager.find(Client, { select: { id: true, redirectUris: true } });
    return clients.map(({ id, redirectUris }) => ({ id, redirectUris }));
  }

  findByIds(clientIds: string[]): Promise<Client[]> {
    return clientIds.length === 0 ? Promise.resolve([]) : this.dataSource.manager.findBy(Client, { id: In(clientIds) });
  }
}
