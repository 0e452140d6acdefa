import type { INestApplicationContext } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import type { AuditService } from '../audit/audit.service.js';
import type { ClientsService } from '../clients/clients.service.js';
import { ClientAuthMethod, GrantType, TokenType } from '../common/oauth.constants.js';
import type { PurgeService } from '../housekeeping/purge.service.js';
import { isSigningAlgorithm, SIGNING_ALGORITHMS } from '../signing/signing-algorithms.js';
import type { SigningKeyVault } from '../signing/signing-key-vault.js';
import type { OpenIdClientMetadata } from '../clients/openid-client-settings.js';
import type { ClientKeyMetadata } from '../clients/client-keys.js';
import { ACR } from '../common/authentication-context.js';
import type { ResourceServersService } from '../resource-servers/resource-servers.service.js';
import { required, UsageError, type Command, type Flags } from './command.js';
import { clientsApplyCommand } from './clients-apply.command.js';
import { dbCopyCommand } from './db-copy.command.js';
import { doctorCommand } from './doctor.command.js';
import { IDP_COMMANDS } from './idps.commands.js';
import { GROUP_COMMANDS } from './groups.commands.js';
import { MAIL_COMMANDS } from './mail.commands.js';
import { ADMIN_ROLE_COMMANDS } from './admin-roles.commands.js';
import { USER_COMMANDS } from './users.commands.js';

/** OpenID Connect client settings from clients:create's flags; undefined when none is given (every default). */
function openIdFlags(flags: Flags): OpenIdClientMetadata | undefined {
  const maxAge = flags['default-max-age'] as string | undefined;
  if (maxAge !== undefined && !/^[0-9]{1,9}$/.test(maxAge)) throw new UsageError('--default-max-age must be a number of seconds');
  if (flags['require-mfa'] === true && flags['minimum-acr'] !== undefined) throw new UsageError(`--require-mfa is --minimum-acr ${ACR.multiFactor}; give one of them`);
  const metadata: OpenIdClientMetadata = {
    id_token_signed_response_alg: flags['id-token-alg'] as string | undefined,
    subject_type: flags['subject-type'] as string | undefined,
    sector_identifier_uri: flags['sector-identifier-uri'] as string | undefined,
    post_logout_redirect_uris: flags['post-logout-redirect-uri'] as string[] | undefined,
    backchannel_logout_uri: flags['backchannel-logout-uri'] as string | undefined,
    default_max_age: maxAge === undefined ? undefined : Number(maxAge),
    // --require-mfa: every request of the client needs a second factor, whatever its acr_values (a floor, not default_acr_values).
    minimum_acr: flags['require-mfa'] === true ? ACR.multiFactor : (flags['minimum-acr'] as string | undefined),
    require_pushed_authorization_requests: flags['require-par'] === true ? true : undefined,
    dpop_bound_access_tokens: flags['dpop-bound'] === true ? true : undefined,
    security_profile: flags['security-profile'] as string | undefined,
    // --minimal-id-token: the person's claims at userinfo only, not in the ID token (id_token_claims false).
    id_token_claims: flags['minimal-id-token'] === true ? false : undefined,
  };
  return Object.values(metadata).some((value) => value !== undefined) ? metadata : undefined;
}

/** A private_key_jwt client's keys from clients:create's flags: --jwks takes the JWK Set as JSON text. */
function keyFlags(flags: Flags): ClientKeyMetadata {
  const text = flags.jwks as string | undefined;
  let jwks: ClientKeyMetadata['jwks'];
  if (text !== undefined) {
    try {
      jwks = JSON.parse(text) as ClientKeyMetadata['jwks'];
    } catch {
      throw new UsageError('--jwks must be a JWK Set as JSON text, e.g. \'{"keys":[{"kty":"EC",…}]}\'');
    }
    if (typeof jwks !== 'object' || jwks === null || !Array.isArray(jwks.keys)) throw new UsageError('--jwks must be a JSON object with a "keys" array (RFC 7517 §5)');
  }
  return { jwks, jwks_uri: flags['jwks-uri'] as string | undefined, token_endpoint_auth_signing_alg: flags['auth-signing-alg'] as string | undefined };
}

// Services are imported when a command runs, not with this table: `--help` and a mistyped command
// line are answered without loading Nest, TypeORM and the rest (main.ts loads them after parsing).
const resourceServersService = async (app: INestApplicationContext): Promise<ResourceServersService> =>
  app.get((await import('../resource-servers/resource-servers.service.js')).ResourceServersService);
const clientsService = async (app: INestApplicationContext): Promise<ClientsService> => app.get((await import('../clients/clients.service.js')).ClientsService);
const auditService = async (app: INestApplicationContext): Promise<AuditService> => app.get((await import('../audit/audit.service.js')).AuditService);
const purgeService = async (app: INestApplicationContext): Promise<PurgeService> => app.get((await import('../housekeeping/purge.service.js')).PurgeService);
const signingKeyVault = async (app: INestApplicationContext): Promise<SigningKeyVault> => app.get((await import('../signing/signing-key-vault.js')).SigningKeyVault);
const dataSource = async (app: INestApplicationContext): Promise<DataSource> => app.get<DataSource>((await import('@nestjs/typeorm')).getDataSourceToken());

const GRANT_TYPES = new Set<string>(Object.values(GrantType));
const TOKEN_TYPES = new Set<string>(Object.values(TokenType));
const CONFIDENTIAL_AUTH_METHODS = new Set<string>([ClientAuthMethod.ClientSecretBasic, ClientAuthMethod.ClientSecretPost, ClientAuthMethod.PrivateKeyJwt]);

export const COMMANDS: Record<string, Command> = {
  ...USER_COMMANDS,
  'clients:create': {
    usage:
      'clients:create --name NAME [--redirect-uri URI ...] [--scope "a b"] [--public] [--grant-type TYPE ...] [--response-type TYPE ...] [--token-type bearer|mac] ' +
      '[--auth-method client_secret_basic|client_secret_post] [--client-uri URL] [--logo-uri URL] [--policy-uri URL] [--tos-uri URL] ' +
      '[--id-token-alg RS256|ES256|EdDSA] [--subject-type public|pairwise] [--sector-identifier-uri URL] [--post-logout-redirect-uri URI ...] [--backchannel-logout-uri URL] [--default-max-age SECONDS] [--require-mfa | --minimum-acr ACR] [--require-par] [--dpop-bound] [--security-profile default|fapi2] [--minimal-id-token] ' +
      '[--auth-method private_key_jwt (--jwks JSON | --jwks-uri URL) [--auth-signing-alg ALG]]',
    options: {
      name: { type: 'string' },
      'redirect-uri': { type: 'string', multiple: true },
      scope: { type: 'string' },
      public: { type: 'boolean' },
      'grant-type': { type: 'string', multiple: true },
      // RFC 7591 §2 response_types: id_token (with --grant-type implicit) only so; absent, those the grant types imply.
      'response-type': { type: 'string', multiple: true },
      'token-type': { type: 'string' },
      'auth-method': { type: 'string' },
      'client-uri': { type: 'string' },
      'logo-uri': { type: 'string' },
      'policy-uri': { type: 'string' },
      'tos-uri': { type: 'string' },
      'id-token-alg': { type: 'string' },
      'subject-type': { type: 'string' },
      'post-logout-redirect-uri': { type: 'string', multiple: true },
      'backchannel-logout-uri': { type: 'string' },
      'default-max-age': { type: 'string' },
      'require-mfa': { type: 'boolean' },
      'minimum-acr': { type: 'string' },
      'require-par': { type: 'boolean' },
      'dpop-bound': { type: 'boolean' },
      'security-profile': { type: 'string' },
      'minimal-id-token': { type: 'boolean' },
      jwks: { type: 'string' },
      'jwks-uri': { type: 'string' },
      'auth-signing-alg': { type: 'string' },
      'sector-identifier-uri': { type: 'string' },
    },
    async run(app, flags) {
      const grantTypes = flags['grant-type'] as string[] | undefined;
      const unknown = grantTypes?.filter((g) => !GRANT_TYPES.has(g)) ?? [];
      if (unknown.length > 0) throw new UsageError(`unsupported --grant-type ${unknown.join(', ')} (supported: ${[...GRANT_TYPES].join(', ')})`);
      const tokenType = flags['token-type'] as string | undefined;
      if (tokenType !== undefined && !TOKEN_TYPES.has(tokenType)) throw new UsageError(`unsupported --token-type ${tokenType} (supported: ${[...TOKEN_TYPES].join(', ')})`);
      // The method the client must use at the token endpoint, and no other (RFC 7591 §2).
      const authMethod = flags['auth-method'] as string | undefined;
      if (authMethod !== undefined && !CONFIDENTIAL_AUTH_METHODS.has(authMethod)) {
        throw new UsageError(`unsupported --auth-method ${authMethod} (supported: ${[...CONFIDENTIAL_AUTH_METHODS].join(', ')}; a --public client uses none)`);
      }
      if (authMethod !== undefined && flags.public === true) throw new UsageError('--auth-method applies to confidential clients; a --public client authenticates with none');
      const clients = await clientsService(app);
      const { client, secret } = await clients.create({
        name: required(flags, 'name'),
        redirectUris: (flags['redirect-uri'] as string[] | undefined) ?? [],
        scope: flags.scope as string | undefined,
        isPublic: flags.public === true,
        grantTypes: grantTypes as GrantType[] | undefined,
        responseTypes: flags['response-type'] as string[] | undefined,
        accessTokenType: tokenType as TokenType | undefined,
        tokenEndpointAuthMethod: authMethod as ClientAuthMethod | undefined,
        descriptive: {
          client_uri: flags['client-uri'] as string | undefined,
          logo_uri: flags['logo-uri'] as string | undefined,
          policy_uri: flags['policy-uri'] as string | undefined,
          tos_uri: flags['tos-uri'] as string | undefined,
        },
        openId: openIdFlags(flags),
        keys: keyFlags(flags),
      });
      return clients.toView(client, secret);
    },
  },
  'clients:list': {
    usage: 'clients:list',
    options: {},
    async run(app) {
      const clients = await clientsService(app);
      return (await clients.list()).map((c) => clients.toView(c));
    },
  },
  'clients:delete': {
    usage: 'clients:delete --client-id ID',
    options: { 'client-id': { type: 'string' } },
    async run(app, flags) {
      const clientId = required(flags, 'client-id');
      await (await clientsService(app)).delete(clientId);
      return { deleted: true, client_id: clientId };
    },
  },
  'clients:rotate-secret': {
    usage: 'clients:rotate-secret --client-id ID',
    options: { 'client-id': { type: 'string' } },
    async run(app, flags) {
      const clients = await clientsService(app);
      const { client, secret } = await clients.rotateSecret(required(flags, 'client-id'));
      return clients.toView(client, secret);
    },
  },
  'resources:register': {
    usage: 'resources:register --uri URI [--name NAME] [--jwt-access-tokens] [--introspector CLIENT_ID]',
    options: { uri: { type: 'string' }, name: { type: 'string' }, 'jwt-access-tokens': { type: 'boolean' }, introspector: { type: 'string' } },
    // A resource server clients may restrict tokens to (RFC 8707); --jwt-access-tokens: it gets RFC 9068 JWTs;
    // --introspector: the client it introspects with, the only one to see its tokens as active (RFC 7662 §2.2).
    async run(app, flags) {
      const servers = await resourceServersService(app);
      const format = flags['jwt-access-tokens'] === true ? 'jwt' : 'opaque';
      const introspector = flags.introspector as string | undefined;
      return servers.view(await servers.register({ uri: required(flags, 'uri'), name: flags.name as string | undefined, accessTokenFormat: format, introspector }, 'cli'));
    },
  },
  'resources:list': {
    usage: 'resources:list',
    options: {},
    async run(app) {
      const servers = await resourceServersService(app);
      return (await servers.list()).map((server) => servers.view(server));
    },
  },
  'resources:delete': {
    usage: 'resources:delete --uri URI',
    options: { uri: { type: 'string' } },
    async run(app, flags) {
      const uri = required(flags, 'uri');
      await (await resourceServersService(app)).remove({ uri }, 'cli');
      return { deleted: true, uri };
    },
  },
  'audit:list': {
    usage: 'audit:list [--limit N] [--actor ACTOR] [--event NAME | --event PREFIX.] [--person USER_ID] [--client CLIENT_ID] [--since RFC3339] [--until RFC3339]',
    options: { limit: { type: 'string' }, actor: { type: 'string' }, event: { type: 'string' }, person: { type: 'string' }, client: { type: 'string' }, since: { type: 'string' }, until: { type: 'string' } },
    // The admin API's filters (GET /admin/api/v1/audit-events), read by the same query.
    async run(app, flags) {
      const raw = (flags.limit as string | undefined) ?? '100';
      if (!/^[0-9]{1,5}$/.test(raw) || Number(raw) < 1) throw new UsageError('--limit must be a positive integer');
      const { parseAuditFilter } = await import('../audit/audit-filter.js');
      const { auditEventView } = await import('../audit/audit.service.js');
      const filter = parseAuditFilter({ actor: flags.actor, event: flags.event, person: flags.person, client: flags.client, since: flags.since, until: flags.until });
      return (await (await auditService(app)).list(Number(raw), filter)).map(auditEventView);
    },
  },
  'keys:list': {
    usage: 'keys:list',
    options: {},
    async run(app) {
      return (await signingKeyVault(app)).list();
    },
  },
  'keys:rotate': {
    usage: `keys:rotate [--alg ${SIGNING_ALGORITHMS.join('|')}] (default: every algorithm)`,
    options: { alg: { type: 'string' } },
    // The new key is published now and signs one SIGNING_KEY_PUBLISH_LEAD_SECONDS later.
    async run(app, flags) {
      const alg = flags.alg as string | undefined;
      if (alg !== undefined && !isSigningAlgorithm(alg)) throw new UsageError(`unsupported --alg ${alg} (supported: ${SIGNING_ALGORITHMS.join(', ')})`);
      return (await signingKeyVault(app)).rotateEach(alg === undefined ? SIGNING_ALGORITHMS : [alg], 'cli');
    },
  },
  purge: {
    usage: 'purge',
    options: {},
    // The scheduled purge's work, once, now (cron, or instances run with PURGE_INTERVAL_SECONDS=0).
    async run(app) {
      return (await purgeService(app)).purge();
    },
  },
  'migrations:run': {
    usage: 'migrations:run',
    options: {},
    async run(app) {
      const applied = await (await dataSource(app)).runMigrations({ transaction: 'each' });
      return { applied: applied.map((m) => m.name) };
    },
  },
  'clients:apply': clientsApplyCommand,
  'db:copy': dbCopyCommand,
  ...IDP_COMMANDS,
  ...GROUP_COMMANDS,
  ...MAIL_COMMANDS,
  ...ADMIN_ROLE_COMMANDS,
  doctor: doctorCommand,
};
