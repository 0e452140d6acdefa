import { Injectable } from '@nestjs/common';
import { ADMIN_SCOPES } from './admin-scopes.js';
import { CollectionRegistry } from '../collections/collection-registry.js';

export interface ScopeDescription {
  scope: string;
  description: string;
}

/**
 * Scopes that only a client can hold for itself (client_credentials): no person grants them on a
 * consent page, and the authorization endpoint never issues them.
 */
export const CLIENT_SCOPES: Readonly<Record<string, string>> = {
  /** RFC 7591: register and manage clients over HTTP. */
  'clients:register': 'Register and manage OAuth clients',
  /** RFC 7662: ask whether a token is active. */
  'tokens:introspect': 'Check whether access tokens are active',
  /** RFC 7644: provision people and groups at /scim/v2 (a directory's connector). */
  scim: 'Provision people and groups (SCIM 2.0)',
};

/**
 * Client scopes that, like the admin scopes, only an owner (admin:owner, or the CLI) gives, and whose
 * holders only an owner changes (issue 48; src/clients/client-change-policy.ts says why).
 */
export const OWNER_ONLY_CLIENT_SCOPES: readonly string[] = ['scim'];

/**
 * OpenID Connect's scopes (Core §3.1.2.1, §5.4, §11): every client of the authorization code flow
 * may ask a person for them, whatever scope it registered, as with node-oidc-provider and Keycloak.
 */
export const IDENTITY_SCOPES: Readonly<Record<string, string>> = {
  openid: 'Know who you are when you sign in to it with this account',
  profile: 'See your name and username',
  email: 'See your email address',
  offline_access: 'Keep its access while you are not using it',
};

/** profile and email asked together read as one thing a person gives away (issue #18: "your name and email address"). */
const PROFILE_AND_EMAIL = 'See your name, username and email address';

/** The scope that makes an authorization request an OpenID Connect authentication request (Core §3.1.2.1). */
export const OPENID_SCOPE = 'openid';

/**
 * The scopes this server knows: the data scopes derived from the collections file
 * (`<collection>:read`, `<collection>:write`), described in words for the consent page, and the
 * client scopes above.
 */
@Injectable()
export class ScopeCatalog {
  private readonly descriptions: ReadonlyMap<string, string>;
  private readonly dataScopes: ReadonlySet<string>;

  constructor(collections: CollectionRegistry) {
    const entries: [string, string][] = [];
    for (const collection of collections.list()) {
      entries.push([collection.readScope, `See your ${collection.name}`]);
      entries.push([collection.writeScope, `Create, change and delete your ${collection.name}`]);
    }
    this.dataScopes = new Set(entries.map(([scope]) => scope));
    this.descriptions = new Map([...Object.entries(IDENTITY_SCOPES), ...entries, ...Object.entries(CLIENT_SCOPES), ...Object.entries(ADMIN_SCOPES)]);
  }

  /** A scope a person can grant to an application (authorization code grant). */
  isDataScope(scope: string): boolean {
    return this.dataScopes.has(scope);
  }

  /** A scope a person can grant to any client of the code flow: OpenID Connect's, or a data scope. */
  isIdentityScope(scope: string): boolean {
    return Object.hasOwn(IDENTITY_SCOPES, scope);
  }

  identityScopes(): string[] {
    return Object.keys(IDENTITY_SCOPES);
  }

  /** Every scope a client may be registered for, in a stable order. */
  all(): string[] {
    return [...this.descriptions.keys()];
  }

  isKnown(scope: string): boolean {
    return this.descriptions.has(scope);
  }

  /** A request's scopes in words, in order, for the consent and access pages; profile and email become one line. */
  describeAll(scopes: readonly string[]): ScopeDescription[] {
    const both = scopes.includes('profile') && scopes.includes('email');
    return scopes.flatMap((scope) => {
      if (both && scope === 'email') return [];
      if (both && scope === 'profile') return [{ scope: 'profile email', description: PROFILE_AND_EMAIL }];
      return [this.describe(scope)];
    });
  }

  describe(scope: string): ScopeDescription {
    return { scope, description: this.descriptions.get(scope) ?? `Use the "${scope}" permission` };
  }
}
