import { Injectable } from '@nestjs/common';
import { CollectionRegistry } from '../collections/collection-registry.js';

export interface ScopeDescription {
  scope: string;
  description: string;
}

/**
 * The scopes this server knows, all derived from the collections file (`<collection>:read`,
 * `<collection>:write`), and what each lets an application do, in words, for the consent page.
 */
@Injectable()
export class ScopeCatalog {
  private readonly descriptions: ReadonlyMap<string, string>;

  constructor(collections: CollectionRegistry) {
    const entries: [string, string][] = [];
    for (const collection of collections.list()) {
      entries.push([collection.readScope, `See your ${collection.name}`]);
      entries.push([collection.writeScope, `Create, change and delete your ${collection.name}`]);
    }
    this.descriptions = new Map(entries);
  }

  /** Every scope a client may be registered for, in a stable order. */
  all(): string[] {
    return [...this.descriptions.keys()];
  }

  isKnown(scope: string): boolean {
    return this.descriptions.has(scope);
  }

  describe(scope: string): ScopeDescription {
    return { scope, description: this.descriptions.get(scope) ?? `Use the "${scope}" permission` };
  }
}
