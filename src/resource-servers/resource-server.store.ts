import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { In, type DataSource, type EntityManager } from 'typeorm';
import type { KeysetPage } from '../database/keyset-page.js';
import { ResourceServer } from './resource-server.entity.js';

/** The resource_servers table (RFC 8707 registrations). Writes take the caller's manager: a registration and its audit event commit together. */
@Injectable()
export class ResourceServerStore {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  list(): Promise<ResourceServer[]> {
    return this.dataSource.manager.find(ResourceServer, { order: { createdAt: 'ASC' } });
  }

  /** A page by name then id (the keyset: names repeat; URIs may be longer than a cursor holds). */
  page(page: KeysetPage): Promise<ResourceServer[]> {
    const query = this.dataSource.manager.createQueryBuilder(ResourceServer, 'server');
    if (page.after !== null) query.where('(server.name > :name OR (server.name = :name AND server.id > :id))', { name: page.after.value, id: page.after.id });
    return query.orderBy('server.name', 'ASC').addOrderBy('server.id', 'ASC').limit(page.limit + 1).getMany();
  }

  existsWithUri(uri: string): Promise<boolean> {
    return this.dataSource.manager.existsBy(ResourceServer, { uri });
  }

  /** The registered servers among `uris`, in one indexed read. */
  findByUris(uris: readonly string[]): Promise<ResourceServer[]> {
    return uris.length === 0 ? Promise.resolve([]) : this.dataSource.manager.findBy(ResourceServer, { uri: In([...uris]) });
  }

  save(server: ResourceServer, manager: EntityManager): Promise<ResourceServer> {
    return manager.save(server);
  }

  /** Deletes the server named by its id or URI, in the caller's transaction; the row deleted, or null when there was none. */
  async delete(by: { id: string } | { uri: string }, manager: EntityManager): Promise<ResourceServer | null> {
    const server = await manager.findOneBy(ResourceServer, by);
    const deleted = server ? await manager.delete(ResourceServer, { id: server.id }) : undefined;
    return server && deleted?.affected ? server : null;
  }
}
