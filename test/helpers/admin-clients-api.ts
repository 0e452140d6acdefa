import type { DataSource } from 'typeorm';
import { AdminRolesService } from '../../src/admin/admin-roles.service.js';
import type { AdminRole } from '../../src/scopes/admin-scopes.js';
import { ResourceServersService } from '../../src/resource-servers/resource-servers.service.js';
import { ADMIN_API, type AdminApi, type AdminResponse, type SignedInAdmin } from './admin-api.js';
import { obtainTokens } from './api-client.js';
import type { RegisteredClient, TestApp, TestUser } from './test-app.js';

/** What a change of a client, its grants or a resource server may write: equal before and after a refused request. */
export const CLIENT_TABLES = ['clients', 'consents', 'tokens', 'authorization_codes', 'resource_servers', 'audit_events'];

/** One caller per role, each signed in through the console as the admin API's callers are. */
export interface AdminCallers {
  owner: SignedInAdmin;
  clientAdmin: SignedInAdmin;
  auditor: SignedInAdmin;
  helpdesk: SignedInAdmin;
  /** A person holding no administrator role: their token carries no admin scope. */
  nobody: SignedInAdmin;
}

export async function adminCallers(admin: AdminApi): Promise<AdminCallers> {
  return {
    owner: await admin.signIn(['owner']),
    clientAdmin: await admin.signIn(['client-admin']),
    auditor: await admin.signIn(['auditor']),
    helpdesk: await admin.signIn(['helpdesk']),
    nobody: await admin.signIn([]),
  };
}

/** Someone signed in holding `role`, whose role was then removed: their token still carries its scope, which no longer opens anything. */
export async function demotedAdmin(admin: AdminApi, role: AdminRole): Promise<SignedInAdmin> {
  const demoted = await admin.signIn([role]);
  await admin.app.app.get(AdminRolesService).revoke(demoted.userId, role, 'cli');
  return demoted;
}

/** RFC 7591 metadata of a confidential service client (client_credentials, notes:read). */
export function serviceClientMetadata(name: string, scope = 'notes:read'): Record<string, unknown> {
  return { client_name: name, grant_types: ['client_credentials'], scope, redirect_uris: [] };
}

/** A request with a body sent as is (malformed JSON, another media type). */
export async function rawAdminRequest(app: TestApp, method: string, path: string, token: string, body: string, contentType = 'application/json'): Promise<AdminResponse> {
  const response = await fetch(app.url(ADMIN_API + path), { method, headers: { authorization: `Bearer ${token}`, 'content-type': contentType }, body });
  const text = await response.text();
  return { status: response.status, body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>), headers: response.headers };
}

/** A person who allowed `client` access through the real code flow (OpenID, so the session records the client), and their tokens. */
export async function personWithGrant(app: TestApp, client: RegisteredClient, scope = 'openid notes:read'): Promise<{ user: TestUser; userId: string; accessToken: string; refreshToken?: string }> {
  const user = await app.createUser();
  const tokens = await obtainTokens(app, client, user, scope);
  const [row] = (await app.dataSource.query(`SELECT "id" FROM "users" WHERE "username" = '${user.username}'`)) as { id: string }[];
  return { user, userId: row.id, accessToken: tokens.accessToken, refreshToken: tokens.refreshToken };
}

/** A resource server registered as resources:register does, for a test to remove. */
export async function registeredResourceServer(app: TestApp, name: string): Promise<string> {
  const uri = `https://${name.toLowerCase().replace(/[^a-z0-9]+/g, '-')}-${Math.random().toString(36).slice(2, 8)}.example.com/api`;
  return (await app.app.get(ResourceServersService).register({ uri, name }, 'cli')).id;
}

/** The audit events about `subject`, oldest first: [actor, action, details]. */
export async function auditEventsOf(dataSource: DataSource, subject: string): Promise<[string, string, Record<string, unknown>, string | null][]> {
  const rows = (await dataSource.query(`SELECT "actor", "action", "details", "ip" FROM "audit_events" WHERE "subject" = '${subject}' ORDER BY "id"`)) as { actor: string; action: string; details: string | Record<string, unknown>; ip: string | null }[];
  return rows.map((row) => [row.actor, row.action, typeof row.details === 'string' ? (JSON.parse(row.details) as Record<string, unknown>) : row.details, row.ip]);
}
