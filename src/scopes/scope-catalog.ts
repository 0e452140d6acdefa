import { Injectable } from '@nestjs/common';

export interface ScopeDescription {
  scope: string;
  description: string;
}

/**
 * Says in words what a scope lets an application do, for the consent page. Data scopes follow the
 * `<collection>:read` / `<collection>:write` convention of the REST data API.
 */
@Injectable()
export class ScopeCatalog {
  describe(scope: string): ScopeDescription {
    const match = /^([a-z][a-z0-9_-]*):(read|write)$/.exec(scope);
    if (match) {
      const [, collection, access] = match;
      const description = access === 'read' ? `See your ${collection}` : `Create, change and delete your ${collection}`;
      return { scope, description };
    }
    return { scope, description: `Use the "${scope}" permission` };
  }
}
