/**
 * The admin API's scopes (issue 48) and the roles that let a person hold them. A token carries
 * scopes; a person holds roles (admin_roles). A person's token opens the admin API only for a scope
 * that person's roles still allow at the moment of the request (AdminAccess); a service client's
 * only for a scope its registration still holds.
 */
export const ADMIN_SCOPES = {
  'admin:read': 'Read everything an administrator sees: people, clients, sessions, keys and the audit log (auditor)',
  'admin:people': 'Manage people: invite, update, reset second factors, lock and unlock, end sessions (help desk)',
  'admin:clients': 'Register and manage OAuth clients and resource servers (client administrator)',
  'admin:owner': 'Administer everything, including signing keys, identity providers, groups and who is an administrator (owner)',
} as const;

export type AdminScope = keyof typeof ADMIN_SCOPES;

/** A person's administrator role, and the one scope it lets their sign-ins carry. */
export const ADMIN_ROLES = {
  auditor: 'admin:read',
  helpdesk: 'admin:people',
  'client-admin': 'admin:clients',
  owner: 'admin:owner',
} as const satisfies Record<string, AdminScope>;

export type AdminRole = keyof typeof ADMIN_ROLES;

export function isAdminScope(scope: string): scope is AdminScope {
  return Object.hasOwn(ADMIN_SCOPES, scope);
}

export function isAdminRole(role: string): role is AdminRole {
  return Object.hasOwn(ADMIN_ROLES, role);
}

/**
 * What an admin route touches:
 * - self: who the caller is (GET /me), for any administrator;
 * - people: people, their factors, sessions and grants (help desk);
 * - clients: OAuth clients and resource servers (client administrator);
 * - audit: the audit log, append-only, read by every administrator ("why did that sign-in fail");
 * - overview: how many people, clients and live sessions there are, and which server instances
 *   run (the console's dashboard), read by every administrator: counts and hosts, never which
 *   person or client;
 * - system: signing keys, identity providers, groups (membership opens applications), administrator
 *   roles and doctor: the owner's, read by the auditor.
 */
export type AdminArea = 'self' | 'people' | 'clients' | 'audit' | 'overview' | 'system';
export type AdminAction = 'read' | 'write';

export interface AdminPermission {
  area: AdminArea;
  action: AdminAction;
}

/** The one table of who may do what; AdminAccess reads it and nothing else decides. */
const PERMITTING: Readonly<Record<AdminArea, Readonly<Record<AdminAction, readonly AdminScope[]>>>> = {
  self: { read: ['admin:read', 'admin:people', 'admin:clients', 'admin:owner'], write: [] },
  people: { read: ['admin:read', 'admin:people', 'admin:owner'], write: ['admin:people', 'admin:owner'] },
  clients: { read: ['admin:read', 'admin:clients', 'admin:owner'], write: ['admin:clients', 'admin:owner'] },
  audit: { read: ['admin:read', 'admin:people', 'admin:clients', 'admin:owner'], write: [] },
  overview: { read: ['admin:read', 'admin:people', 'admin:clients', 'admin:owner'], write: [] },
  system: { read: ['admin:read', 'admin:owner'], write: ['admin:owner'] },
};

/** The scopes any one of which permits the action. */
export function permittingScopes({ area, action }: AdminPermission): readonly AdminScope[] {
  return PERMITTING[area][action];
}

/** The scopes a person's roles allow. */
export function scopesOfRoles(roles: Iterable<AdminRole>): Set<AdminScope> {
  return new Set([...roles].map((role) => ADMIN_ROLES[role]));
}
