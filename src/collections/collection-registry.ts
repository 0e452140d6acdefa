import { Inject, Injectable } from '@nestjs/common';
import { apiConfig, type ApiConfig } from '../config/api.config.js';
import type { Collection } from './collection.js';
import { loadCollections } from './collections-loader.js';

/**
 * The declared collections, loaded once. Each item schema is compiled when first needed (the CLI
 * never needs one); the server compiles them all as it starts (compileAll), after createApp has
 * checked the whole file.
 */
@Injectable()
export class CollectionRegistry {
  private readonly collections: Map<string, Collection>;

  constructor(@Inject(apiConfig.KEY) config: ApiConfig) {
    this.collections = loadCollections(config.collectionsFile, 'on first use');
  }

  /** Compiles every item schema now, so that no request pays for it. */
  compileAll(): void {
    for (const collection of this.collections.values()) void collection.validate;
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
