import { AdminRolesService } from '../../src/admin/admin-roles.service.js';
import { permittingScopes, type AdminAction, type AdminArea } from '../../src/scopes/admin-scopes.js';
import { ADMIN_API, tableSnapshot, type AdminApi, type AdminResponse } from './admin-api.js';

/** The tables the system and audit routes of the admin API may change. */
export const SYSTEM_TABLES = ['groups', 'group_members', 'identity_providers', 'upstream_links', 'signing_keys', 'audit_events', 'admin_roles'];

/** Who calls: one person per role, a person without any, and an owner whose role was taken away after sign-in. */
export interface AdminCallers {
  owner: string;
  auditor: string;
  helpdesk: string;
  clientAdmin: string;
  /** A person without an administrator role: their token carries no admin scope. */
  nobody: string;
  /** Signed in as an owner (the token carries admin:owner), then the role was removed. */
  demoted: string;
  ownerId: string;
}

export async function adminCallers(admin: AdminApi): Promise<AdminCallers> {
  const owner = await admin.signIn(['owner']);
  const demoted = await admin.signIn(['owner']);
  await admin.app.app.get(AdminRolesService).revoke(demoted.userId, 'owner', 'cli');
  return {
    owner: owner.token,
    ownerId: owner.userId,
    auditor: (await admin.signIn(['auditor'])).token,
    helpdesk: (await admin.signIn(['helpdesk'])).token,
    clientAdmin: (await admin.signIn(['client-admin'])).token,
    nobody: (await admin.signIn([])).token,
    demoted: demoted.token,
  };
}

/**
 * An owner's request refused to everyone else, with the tables unchanged: no token (401), a help
 * desk's, a client administrator's and an auditor's token (403: their scopes do not permit it), a
 * person without a role (403), an owner whose role was removed since (403).
 */
export async function expectOwnerOnly(admin: AdminApi, callers: AdminCallers, method: string, path: string, body?: unknown): Promise<void> {
  const before = await tableSnapshot(admin.app.dataSource, SYSTEM_TABLES);
  const answers: [string, number][] = [];
  for (const [who, token] of [['no token', undefined], ['helpdesk', callers.helpdesk], ['client-admin', callers.clientAdmin], ['auditor', callers.auditor], ['no role', callers.nobody], ['demoted', callers.demoted]] as const) {
    const response = await admin.request(method, path, token, body);
    answers.push([who, response.status]);
    if (response.status !== 401) expect(response.body.error).toBe('insufficient_scope');
  }
  expect(answers).toEqual([['no token', 401], ['helpdesk', 403], ['client-admin', 403], ['auditor', 403], ['no role', 403], ['demoted', 403]]);
  expect(await tableSnapshot(admin.app.dataSource, SYSTEM_TABLES)).toBe(before);
}

/** The scopes the OpenAPI document names for a route, which must be those its @AdminRoute permits. */
export async function expectDescribedAs(admin: AdminApi, method: string, path: string, area: AdminArea, action: AdminAction): Promise<void> {
  const document = (await (await fetch(admin.app.url('/api/docs/json'))).json()) as { paths: Record<string, Record<string, { security: { oauth2: string[] }[] }>> };
  const security = document.paths[`${ADMIN_API}${path}`]?.[method.toLowerCase()]?.security;
  expect({ route: `${method} ${path}`, scopes: security?.flatMap((s) => s.oauth2).sort() }).toEqual({ route: `${method} ${path}`, scopes: [...permittingScopes({ area, action })].sort() });
}

/** Every page of a list, following `next` from the first; the items in order. */
export async function allPages(admin: AdminApi, path: string, token: string): Promise<{ items: Record<string, unknown>[]; pages: number }> {
  const items: Record<string, unknown>[] = [];
  let next: string | null = path;
  let pages = 0;
  while (next !== null) {
    const response: AdminResponse = await admin.request('GET', next.startsWith(ADMIN_API) ? next.slice(ADMIN_API.length) : next, token);
    expect(response.status).toBe(200);
    items.push(...(response.body.items as Record<string, unknown>[]));
    next = response.body.next as string | null;
    pages++;
  }
  return { items, pages };
}
