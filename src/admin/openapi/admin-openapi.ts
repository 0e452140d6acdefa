import { ADMIN_SCOPES } from '../../scopes/admin-scopes.js';
import { ADMIN_API } from '../admin-reply.js';
import { AUDIT_PATHS } from './audit.paths.js';
import { CLIENT_SETTINGS_PATHS } from './client-settings.paths.js';
import { CLIENTS_PATHS } from './clients.paths.js';
import { CORE_PATHS } from './core.paths.js';
import { PEOPLE_PATHS } from './people.paths.js';
import { PERSON_LINK_PATHS } from './person-links.paths.js';
import { SESSION_PATHS } from './sessions.paths.js';
import { GROUP_PATHS } from './groups.paths.js';
import { IDENTITY_PROVIDER_PATHS } from './identity-providers.paths.js';
import { SYSTEM_PATHS } from './system.paths.js';

/** Every fragment of the admin API's description, one per area. */
const FRAGMENTS: Record<string, object>[] = [CORE_PATHS, PEOPLE_PATHS, PERSON_LINK_PATHS, SESSION_PATHS, CLIENTS_PATHS, CLIENT_SETTINGS_PATHS, AUDIT_PATHS, SYSTEM_PATHS, GROUP_PATHS, IDENTITY_PROVIDER_PATHS];

/**
 * The admin API's paths for the OpenAPI document the data API has (issue 48): keyed by their full
 * path, with the issuer as their server (the data API's server is /api/v1), tagged `admin`.
 */
export function adminPaths(issuer: string): Record<string, object> {
  const paths: Record<string, object> = {};
  for (const fragment of FRAGMENTS) {
    for (const [path, item] of Object.entries(fragment)) {
      const operations = Object.fromEntries(Object.entries(item).map(([method, operation]) => [method, { tags: ['admin'], ...(operation as object) }]));
      paths[`/${ADMIN_API}${path}`] = { servers: [{ url: issuer }], ...operations };
    }
  }
  return paths;
}

/** The admin scopes, for the OAuth 2.0 security scheme's list. */
export function adminScopeDescriptions(): Record<string, string> {
  return { ...ADMIN_SCOPES };
}
