import type { INestApplicationContext } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import type { AuditService } from '../audit/audit.service.js';
import type { ClientsService } from '../clients/clients.service.js';
import { ClientAuthMethod, GrantType, TokenType } from '../common/oauth.constants.js';
import type { PurgeService } from '../housekeeping/purge.service.js';
import type { AccountsService } from '../accounts/accounts.service.js';
import { isSigningAlgorithm, SIGNING_ALGORITHMS } from '../signing/signing-algorithms.js';
import type { SigningKeyVault } from '../signing/signing-key-vault.js';
import type { OpenIdClientMetadata } from '../clients/openid-client-settings.js';
import type { ClientKeyMetadata } from '../clients/client-keys.js';
import type { ProfileChanges } from '../users/user-profile.js';
import type { UsersService } from '../users/users.service.js';
import type { FactorRecords } from '../factors/factor-records.service.js';
import { ACR } from '../common/authentication-context.js';
import type { ResourceServersService } from '../resource-servers/resource-servers.service.js';
import { CommandFailed, required, UsageError, type Command, type Flags } from './command.js';
import { clientsApplyCommand } from './clients-apply.command.js';
import { dbCopyCommand } from './db-copy.command.js';
import { doctorCommand } from './doctor.command.js';
import { IDP_COMMANDS } from './idps.commands.js';
import { GROUP_COMMANDS } from './groups.commands.js';
import { MAIL_COMMANDS } from './mail.commands.js';
import { ADMIN_ROLE_COMMANDS } from './admin-roles.commands.js';


/** The password from --password, or from the first line of stdin with --password-stdin (keeps it out of shell history). */
async function password(flags: Flags): Promise<string> {
  if (flags['password-stdin']) {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('utf8').split(/\r?\n/)[0];
  }
  return required(flags, 'password');
}

const PROFILE_OPTIONS = {
  email: { type: 'string' },
  'email-verified': { type: 'boolean' },
  'email-unverified': { type: 'boolean' },
  name: { type: 'string' },
  'given-name': { type: 'string' },
  'family-name': { type: 'string' },
} as const;
const PROFILE_USAGE = "[--email ADDRESS] [--email-verified | --email-unverified] [--name 'FULL NAME'] [--given-name NAME] [--family-name NAME]";

/** Profile flags (OpenID Connect Core §5.1): an absent flag leaves the attribute alone, an empty one ('') clears it. */
function profile(flags: Flags): ProfileChanges {
  if (flags['email-verified'] && flags['email-unverified']) throw new UsageError('--email-verified and --email-unverified contradict each other');
  const text = (name: string): string | null | undefined => {
    const value = flags[name];
    if (value === undefined) return undefined;
    if (typeof value !== 'string') throw new UsageError(`--${name} takes a value`);
    return value === '' ? null : value;
  };
  return {
    email: text('email'),
    emailVerified: flags['email-verified'] ? true : flags['email-unverified'] ? false : undefined,
    name: text('name'),
    givenName: text('given-name'),
    familyName: text('family-name'),
  };
}

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
const accountsService = async (app: INestApplicationContext): Promise<AccountsService> => app.get((await import('../accounts/accounts.service.js')).AccountsService);
const resourceServersService = async (app: INestApplicationContext): Promise<ResourceServersService> =>
  app.get((await import('../resource-servers/resource-servers.service.js')).ResourceServersService);
const usersService = async (app: INestApplicationContext): Promise<UsersService> => app.get((await import('../users/users.service.js')).UsersService);
const clientsService = async (app: INestApplicationContext): Promise<ClientsService> => app.get((await import('../clients/clients.service.js')).ClientsService);
const auditService = async (app: INestApplicationContext): Promise<AuditService> => app.get((await import('../audit/audit.service.js')).AuditService);
const purgeService = async (app: INestApplicationContext): Promise<PurgeService> => app.get((await import('../housekeeping/purge.service.js')).PurgeService);
const signingKeyVault = async (app: INestApplicationContext): Promise<SigningKeyVault> => app.get((await import('../signing/signing-key-vault.js')).SigningKeyVault);
const factorRecords = async (app: INestApplicationContext): Promise<FactorRecords> => app.get((await import('../factors/factor-records.service.js')).FactorRecords);
const dataSource = async (app: INestApplicationContext): Promise<DataSource> => app.get<DataSource>((await import('@nestjs/typeorm')).getDataSourceToken());

const GRANT_TYPES = new Set<string>(Object.values(GrantType));
const TOKEN_TYPES = new Set<string>(Object.values(TokenType));
const CONFIDENTIAL_AUTH_METHODS = new Set<string>([ClientAuthMethod.ClientSecretBasic, ClientAuthMethod.ClientSecretPost, ClientAuthMethod.PrivateKeyJwt]);

export const COMMANDS: Record<string, Command> = {
  'users:create': {
    usage: `users:create --username NAME (--password 'PASSWORD' | --password-stdin) ${PROFILE_USAGE}`,
    options: { username: { type: 'string' }, password: { type: 'string' }, 'password-stdin': { type: 'boolean' }, ...PROFILE_OPTIONS },
    async run(app, flags) {
      const users = await usersService(app);
      const changes = profile(flags);
      return users.toView(await users.create(required(flags, 'username'), await password(flags), changes));
    },
  },
  'users:update': {
    usage: `users:update --username NAME ${PROFILE_USAGE} [--require-mfa | --no-require-mfa]`,
    options: { username: { type: 'string' }, ...PROFILE_OPTIONS, 'require-mfa': { type: 'boolean' }, 'no-require-mfa': { type: 'boolean' } },
    async run(app, flags) {
      const users = await usersService(app);
      if (flags['require-mfa'] && flags['no-require-mfa']) throw new UsageError('--require-mfa and --no-require-mfa contradict each other');
      // --require-mfa: the person must use a second factor; without one, they enrol one right after the password.
      const requireMfa = flags['require-mfa'] ? true : flags['no-require-mfa'] ? false : undefined;
      return users.toView(await users.updateProfile(required(flags, 'username'), { ...profile(flags), requireMfa }));
    },
  },
  'users:show': {
    usage: 'users:show --username NAME',
    options: { username: { type: 'string' } },
    // The person and their second factors: kinds and dates, never a secret.
    async run(app, flags) {
      const users = await usersService(app);
      const user = await users.require(required(flags, 'username'));
      const factors = await (await factorRecords(app)).summary(user.id);
      const upstreamLinks = await app.get((await import('../identity-providers/upstream-accounts.service.js')).UpstreamAccounts).linksOf(user.id);
      return {
        ...users.toView(user),
        // Issue 45: the upstream identities this person signs in with (provider and upstream subject).
        upstream_links: upstreamLinks,
        factors: [
          ...(factors.totp ? [{ kind: 'totp', created_at: factors.totp.createdAt.toISOString(), last_used_at: factors.totp.lastUsedAt?.toISOString() ?? null }] : []),
          ...(factors.recoveryCodes.createdAt ? [{ kind: 'recovery_codes', created_at: factors.recoveryCodes.createdAt.toISOString(), left: factors.recoveryCodes.left }] : []),
          // blocked: a copy was detected (WebAuthn §6.1.1); it signs nobody in until removed (users:passkey-remove, by its id).
          ...factors.passkeys.map((p) => ({
            kind: 'passkey',
            id: p.id,
            name: p.name,
            created_at: p.createdAt.toISOString(),
            last_used_at: p.lastUsedAt?.toISOString() ?? null,
            synced: p.synced,
            blocked: p.clonedAt ? `a copy was detected on ${p.clonedAt.toISOString()}` : null,
          })),
        ],
      };
    },
  },
  'users:mfa-reset': {
    usage: 'users:mfa-reset --username NAME',
    options: { username: { type: 'string' } },
    // For a person who lost their authenticator, recovery codes or passkeys: removes every factor (audited as factor.removed by cli).
    async run(app, flags) {
      const user = await (await usersService(app)).require(required(flags, 'username'));
      const removed = await (await factorRecords(app)).removeAll(user.id, 'cli');
      return { username: user.username, one_time_codes_removed: removed.totp, recovery_codes_removed: removed.recoveryCodes, passkeys_removed: removed.passkeys };
    },
  },
  'users:passkey-remove': {
    usage: 'users:passkey-remove --username NAME --passkey ID',
    options: { username: { type: 'string' }, passkey: { type: 'string' } },
    // One passkey (its id from users:show), e.g. one blocked because a copy was detected: the person then enrols a new one (audited as passkey.removed by cli).
    async run(app, flags) {
      const user = await (await usersService(app)).require(required(flags, 'username'));
      const passkey = required(flags, 'passkey');
      const removed = await (await factorRecords(app)).removePasskey(user.id, passkey, 'cli');
      if (!removed) throw new CommandFailed(`${user.username} has no passkey ${passkey} (users:show lists their passkeys' ids)`);
      return { username: user.username, passkey, removed: true };
    },
  },
  'users:list': {
    usage: 'users:list',
    options: {},
    async run(app) {
      const users = await usersService(app);
      return (await users.list()).map((u) => users.toView(u));
    },
  },
  'users:delete': {
    usage: 'users:delete --username NAME',
    options: { username: { type: 'string' } },
    async run(app, flags) {
      const username = required(flags, 'username');
      // Through the account: their sessions end first, so back-channel logout clients are told.
      await (await accountsService(app)).deleteUser(username, 'cli');
      return { deleted: true, username };
    },
  },
  'users:set-password': {
    usage: "users:set-password --username NAME (--password 'PASSWORD' | --password-stdin)",
    options: { username: { type: 'string' }, password: { type: 'string' }, 'password-stdin': { type: 'boolean' } },
    async run(app, flags) {
      const user = await (await accountsService(app)).setPassword(required(flags, 'username'), await password(flags));
      return (await usersService(app)).toView(user);
    },
  },
  'users:sign-out': {
    usage: 'users:sign-out --username NAME',
    options: { username: { type: 'string' } },
    // Ends every session of the person; clients registered for back-channel logout are told by the servers.
    async run(app, flags) {
      const username = required(flags, 'username');
      return { username, sessions_ended: await (await accountsService(app)).signOutEverywhere(username, 'cli') };
    },
  },
  'users:deactivate': {
    usage: 'users:deactivate --username NAME',
    options: { username: { type: 'string' } },
    // Deprovisioning (issue 46): sessions end, every token is revoked, sign-in is refused until users:reactivate.
    async run(app, flags) {
      const user = await (await usersService(app)).require(required(flags, 'username'));
      const result = await (await accountsService(app)).deactivate(user.id, 'cli');
      return { username: user.username, active: false, sessions_ended: result.sessionsEnded, tokens_revoked: result.tokensRevoked };
    },
  },
  'users:reactivate': {
    usage: 'users:reactivate --username NAME',
    options: { username: { type: 'string' } },
    async run(app, flags) {
      const user = await (await usersService(app)).require(required(flags, 'username'));
      await (await accountsService(app)).reactivate(user.id, 'cli');
      return { username: user.username, active: true };
    },
  },
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
      await (await resourceServersService(app)).remove(uri, 'cli');
      return { deleted: true, uri };
    },
  },
  'audit:list': {
    usage: 'audit:list [--limit N]',
    options: { limit: { type: 'string' } },
    async run(app, flags) {
      const raw = (flags.limit as string | undefined) ?? '100';
      if (!/^[0-9]{1,5}$/.test(raw) || Number(raw) < 1) throw new UsageError('--limit must be a positive integer');
      const events = await (await auditService(app)).list(Number(raw));
      return events.map((e) => ({ at: e.at.toISOString(), actor: e.actor, action: e.action, subject: e.subject, details: e.details }));
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
      const vault = await signingKeyVault(app);
      const rotated: string[] = [];
      for (const each of alg === undefined ? SIGNING_ALGORITHMS : [alg]) rotated.push((await vault.rotate(each, 'cli')).kid);
      return (await vault.list()).filter((key) => rotated.includes(key.kid));
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
