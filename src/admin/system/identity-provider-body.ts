import { DomainError } from '../../common/domain-error.js';
import type { IdentityProviderInput, IdentityProviderView } from '../../identity-providers/identity-providers.service.js';

/**
 * The environment variables a secret may be named by over HTTP. The CLI, run on the server by
 * someone who has its environment anyway, may name any variable or file; over the API a caller
 * naming DATABASE_URL or SIGNING_KEY_ENCRYPTION_KEY as an upstream's client secret, with an
 * upstream of their own, would have the server send them its value. So: a variable of this family,
 * set on every instance for the purpose, and never a file.
 */
export const API_SECRET_ENV = /^LATCHKEY_IDP_[A-Z0-9_]{1,115}$/;

/** Where IdentityProviderSettings hold references (a secret, a key, our SAML key pair). */
const REFERENCES: readonly { path: readonly string[]; wire: string }[] = [
  { path: ['clientAuth', 'secret'], wire: 'client_auth.secret' },
  { path: ['clientAuth', 'key'], wire: 'client_auth.key' },
  { path: ['spSigningKey'], wire: 'sp_signing_key' },
  { path: ['spSigningCertificate'], wire: 'sp_signing_certificate' },
];

function invalid(message: string): DomainError {
  return new DomainError('invalid_identity_provider', message);
}

/**
 * An administrator's JSON (`{"id", "name", "protocol", "enabled", "settings": {…}}`, settings by
 * their snake_case names) as IdentityProvidersService takes it from the CLI's flags: the service
 * checks the settings, this checks only what the HTTP channel may not carry.
 */
export function identityProviderInput(body: Record<string, unknown>): IdentityProviderInput {
  if (body.enabled !== undefined && typeof body.enabled !== 'boolean') throw invalid('enabled must be true or false');
  if (body.name !== undefined && typeof body.name !== 'string') throw invalid('name must be a string');
  if (body.settings !== undefined && !isObject(body.settings)) throw invalid('settings must be an object of the settings by their snake_case names');
  const settings = body.settings === undefined ? undefined : (camelKeys(body.settings, 'settings') as Record<string, unknown>);
  if (settings) channelRules(settings);
  return { id: body.id as string | undefined, displayName: body.name as string | undefined, protocol: body.protocol as string | undefined, enabled: body.enabled as boolean | undefined, settings };
}

/** The provider as the API shows it: the service's view (secrets by reference only), its settings by their snake_case names. */
export function identityProviderWire(view: IdentityProviderView): Record<string, unknown> {
  return { ...view, settings: snakeKeys(view.settings) };
}

function channelRules(settings: Record<string, unknown>): void {
  if ('clientSecret' in settings || 'secret' in settings) {
    throw invalid('A client secret is never sent to the API: put it in an environment variable LATCHKEY_IDP_… on every instance and give "client_auth": {"method": "client_secret_basic", "secret": {"env": "LATCHKEY_IDP_…"}}.');
  }
  if (settings.metadataFile !== undefined && settings.metadataFile !== null) throw invalid('metadata_file names a file on the server: over the API give metadata_url (or use idps:create --metadata-file on the server).');
  for (const { path, wire } of REFERENCES) {
    const value = path.reduce<unknown>((node, key) => (isObject(node) ? node[key] : undefined), settings);
    if (value === undefined || value === null) continue;
    if (typeof value === 'string') throw invalid(`${wire} is never sent as a value: give {"env": "LATCHKEY_IDP_…"}, the environment variable that holds it on every instance.`);
    if (isObject(value) && 'file' in value) throw invalid(`${wire} names a file: over the API only {"env": "LATCHKEY_IDP_…"} (files are named with the CLI on the server).`);
    if (isObject(value) && 'env' in value && (typeof value.env !== 'string' || !API_SECRET_ENV.test(value.env))) {
      throw invalid(`${wire} must name an environment variable LATCHKEY_IDP_… (upper-case letters, digits and _): over the API no other variable may be sent upstream.`);
    }
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** snake_case keys to the settings' camelCase, at every depth (mapping's `given_name` too); a key in any other form is refused. */
function camelKeys(value: unknown, where: string): unknown {
  if (Array.isArray(value)) return value;
  if (!isObject(value)) return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, inner]) => {
      if (!/^[a-z][a-z0-9_]*$/.test(key)) throw invalid(`${where} takes snake_case names (client_id, not clientId): ${JSON.stringify(key)}`);
      return [key.replace(/_([a-z0-9])/g, (_, letter: string) => letter.toUpperCase()), camelKeys(inner, where)];
    }),
  );
}

function snakeKeys(value: unknown): unknown {
  if (!isObject(value)) return value;
  return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`), snakeKeys(inner)]));
}
