import { Inject, Injectable } from '@nestjs/common';
import { apiConfig, type ApiConfig } from '../config/api.config.js';
import type { Collection } from './collection.js';
import { loadCollections } from './collections-loader.js';

/** The declared collections, loaded and compiled once at start-up. */
@Injectable()
export class CollectionRegistry {
  private readonly collections: Map<string, Collection>;

  constructor(@Inject(apiConfig.KEY) config: ApiConfig) {
    this.collections = loadCollections(config.collectionsFile);
  }

  get(name: string): Collection | undefined {
    return this.collections.get(name);
  }

  list(): Collection[] {
    return [...this.collections.values()];
  }

  /** Every scope a client may be registered for or request: `<collection>:read` and `<collection>:write`. */
  scopes(): string[] {
    return this.list().flatMap((c) => [c.readScope, c.writeScope]);
  }
}
