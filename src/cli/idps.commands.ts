import type { INestApplicationContext } from '@nestjs/common';
import type { IdentityProvidersService, IdentityProviderInput } from '../identity-providers/identity-providers.service.js';
import type { SignInMethods } from '../identity-providers/sign-in-methods.js';
import type { PeopleAdministrator } from '../admin/people/people-administrator.js';
import type { PersonUpstreamLinks } from '../admin/people/person-upstream-links.service.js';
import type { UpstreamLinkView } from '../identity-providers/upstream-accounts.service.js';
import type { User } from '../users/user.entity.js';
import type { UsersService } from '../users/users.service.js';
import { callerPath, required, UsageError, type Command, type Flags } from './command.js';

const identityProviders = async (app: INestApplicationContext): Promise<IdentityProvidersService> => app.get((await import('../identity-providers/identity-providers.service.js')).IdentityProvidersService);
const signInMethods = async (app: INestApplicationContext): Promise<SignInMethods> => app.get((await import('../identity-providers/sign-in-methods.js')).SignInMethods);
const usersService = async (app: INestApplicationContext): Promise<UsersService> => app.get((await import('../users/users.service.js')).UsersService);

/** The flags idps:create and idps:update share; a flag not given leaves the setting as it is (update) or at its default (create). */
const SETTING_OPTIONS = {
  name: { type: 'string' },
  issuer: { type: 'string' },
  'client-id': { type: 'string' },
  'client-secret-env': { type: 'string' },
  'client-secret-file': { type: 'string' },
  'client-secret-post': { type: 'boolean' },
  'private-key-file': { type: 'string' },
  'private-key-env': { type: 'string' },
  'public-client': { type: 'boolean' },
  scope: { type: 'string' },
  userinfo: { type: 'boolean' },
  'no-userinfo': { type: 'boolean' },
  'metadata-url': { type: 'string' },
  'metadata-file': { type: 'string' },
  'subject-attribute': { type: 'string' },
  'sp-signing-key-file': { type: 'string' },
  'sp-signing-key-env': { type: 'string' },
  'sp-signing-certificate-file': { type: 'string' },
  'sp-signing-certificate-env': { type: 'string' },
  domain: { type: 'string', multiple: true },
  'no-domains': { type: 'boolean' },
  'create-accounts': { type: 'boolean' },
  'no-create-accounts': { type: 'boolean' },
  'trust-level': { type: 'boolean' },
  'no-trust-level': { type: 'boolean' },
  'trust-email': { type: 'boolean' },
  'no-trust-email': { type: 'boolean' },
  'no-login-hint': { type: 'boolean' },
  'no-upstream-sign-out': { type: 'boolean' },
  map: { type: 'string', multiple: true },
  'groups-claim': { type: 'string' },
  'groups-attribute': { type: 'string' },
  'groups-match': { type: 'string' },
  'groups-create': { type: 'boolean' },
  'no-groups-create': { type: 'boolean' },
  'no-groups': { type: 'boolean' },
  enable: { type: 'boolean' },
  disable: { type: 'boolean' },
} as const;

const SETTINGS_USAGE =
  "[--name 'Contoso'] [--domain contoso.com ...] [--no-create-accounts] [--trust-level] [--trust-email] [--no-login-hint] [--no-upstream-sign-out] [--map ATTRIBUTE=CLAIM ...] [--groups-match name|external_id] [--groups-create] [--no-groups] [--disable]\n" +
  '    OpenID Connect: --issuer URL --client-id ID [--client-secret-env VAR | --client-secret-file PATH [--client-secret-post] | --private-key-file PATH | --private-key-env VAR | --public-client] [--scope "openid email profile"] [--userinfo] [--groups-claim CLAIM]\n' +
  '    SAML 2.0: --metadata-url URL | --metadata-file PATH [--subject-attribute NAME] [--sp-signing-key-file PATH | --sp-signing-key-env VAR --sp-signing-certificate-file PATH | --sp-signing-certificate-env VAR] [--groups-attribute NAME]';

/**
 * users:link and users:unlink: `work` on the person --username names, through PersonUpstreamLinks,
 * the service the admin API's upstream-links routes call (its checks, its audit events, `cli` as
 * the actor: CLI_OPERATOR); then the person's links as they are now.
 */
async function withUpstreamLinks(app: INestApplicationContext, flags: Flags, work: (links: PersonUpstreamLinks, by: PeopleAdministrator, user: User) => Promise<unknown>): Promise<{ username: string; upstream_links: UpstreamLinkView[] }> {
  const [{ PersonUpstreamLinks }, { CLI_OPERATOR }] = await Promise.all([import('../admin/people/person-upstream-links.service.js'), import('../admin/people/people-administrator.js')]);
  const user = await (await usersService(app)).require(required(flags, 'username'));
  const links = app.get(PersonUpstreamLinks);
  await work(links, CLI_OPERATOR, user);
  return { username: user.username, upstream_links: await links.linksOf(user) };
}

/** A pair of opposite flags: true, false, or undefined when neither is given. */
function toggle(flags: Flags, on: string, off: string): boolean | undefined {
  if (flags[on] && flags[off]) throw new UsageError(`--${on} and --${off} contradict each other`);
  return flags[on] ? true : flags[off] ? false : undefined;
}

/** The settings the flags name, by their names in IdentityProviderSettings; only what was given. */
function settingsFrom(flags: Flags): Record<string, unknown> {
  const settings: Record<string, unknown> = {};
  const put = (name: string, value: unknown) => value !== undefined && (settings[name] = value);
  put('issuer', flags.issuer);
  put('clientId', flags['client-id']);
  put('scope', flags.scope);
  put('metadataUrl', flags['metadata-url']);
  put('metadataFile', typeof flags['metadata-file'] === 'string' ? callerPath(flags['metadata-file']) : undefined);
  put('subjectAttribute', flags['subject-attribute']);
  // Our SAML signing key and certificate (signed AuthnRequests and LogoutRequests): by reference only.
  put('spSigningKey', referenceFrom(flags, 'sp-signing-key'));
  put('spSigningCertificate', referenceFrom(flags, 'sp-signing-certificate'));
  put('userinfo', toggle(flags, 'userinfo', 'no-userinfo'));
  put('createAccounts', toggle(flags, 'create-accounts', 'no-create-accounts'));
  put('trustAuthenticationLevel', toggle(flags, 'trust-level', 'no-trust-level'));
  put('trustEmail', toggle(flags, 'trust-email', 'no-trust-email'));
  put('passLoginHint', flags['no-login-hint'] ? false : undefined);
  put('signOutUpstream', flags['no-upstream-sign-out'] ? false : undefined);
  // Groups from the upstream's claims (issue 46): the claim (OpenID Connect) or attribute (SAML) naming them, how they match ours, whether unknown ones are created.
  if (flags['no-groups'] && (flags['groups-claim'] !== undefined || flags['groups-attribute'] !== undefined)) throw new UsageError('--no-groups and --groups-claim/--groups-attribute contradict each other');
  put('groupsClaim', flags['no-groups'] ? null : flags['groups-claim']);
  put('groupsAttribute', flags['no-groups'] ? null : flags['groups-attribute']);
  put('groupsMatch', flags['groups-match']);
  put('groupsCreate', toggle(flags, 'groups-create', 'no-groups-create'));
  if (flags['no-domains']) settings.domains = [];
  else if (flags.domain !== undefined) settings.domains = (flags.domain as string[]).map((domain) => domain.toLowerCase());
  if (flags.map !== undefined) {
    const mapping: Record<string, string> = {};
    for (const entry of flags.map as string[]) {
      const at = entry.indexOf('=');
      if (at < 1) throw new UsageError(`--map takes ATTRIBUTE=CLAIM (email=mail, username=upn), not ${JSON.stringify(entry)}`);
      mapping[toCamel(entry.slice(0, at))] = entry.slice(at + 1);
    }
    settings.mapping = mapping;
  }
  const auth = clientAuthFrom(flags);
  if (auth !== undefined) settings.clientAuth = auth;
  return settings;
}

/** given_name → givenName: the mapping's attribute names as a person types them. */
function toCamel(name: string): string {
  return name.replace(/[-_]([a-z])/g, (_, letter: string) => letter.toUpperCase());
}

/** POSIX's names of environment variables (letters, digits, underscore; not first a digit). */
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * The name of the variable holding a secret. A secret typed here by mistake would be kept in the
 * database in clear as the "name": refused unless it is a name, and never echoed (it may be the secret).
 */
/** `--NAME-file PATH` or `--NAME-env VAR` as a secret reference; undefined when neither is given. */
function referenceFrom(flags: Flags, name: string): { file: string } | { env: string } | undefined {
  if (flags[`${name}-file`] !== undefined && flags[`${name}-env`] !== undefined) throw new UsageError(`give one of --${name}-file and --${name}-env`);
  if (typeof flags[`${name}-file`] === 'string') return { file: callerPath(flags[`${name}-file`] as string) };
  if (typeof flags[`${name}-env`] === 'string') return { env: envName(flags, `${name}-env`) };
  return undefined;
}

function envName(flags: Flags, flag: string): string {
  const name = flags[flag] as string;
  if (!ENV_NAME.test(name)) throw new UsageError(`--${flag} takes the name of the environment variable that holds the secret (letters, digits and _), never the secret itself`);
  return name;
}

/** The client authentication at the upstream's token endpoint: a secret or key only by reference (an environment variable or a file), never on the command line. */
function clientAuthFrom(flags: Flags): Record<string, unknown> | undefined {
  const given = ['client-secret-env', 'client-secret-file', 'private-key-file', 'private-key-env', 'public-client'].filter((name) => flags[name] !== undefined);
  if (given.length > 1) throw new UsageError(`give one of --${given.join(', --')}`);
  if (flags['client-secret-post'] && !flags['client-secret-env'] && !flags['client-secret-file']) throw new UsageError('--client-secret-post goes with --client-secret-env or --client-secret-file');
  const method = flags['client-secret-post'] ? 'client_secret_post' : 'client_secret_basic';
  if (typeof flags['client-secret-env'] === 'string') return { method, secret: { env: envName(flags, 'client-secret-env') } };
  if (typeof flags['client-secret-file'] === 'string') return { method, secret: { file: callerPath(flags['client-secret-file']) } };
  if (typeof flags['private-key-file'] === 'string') return { method: 'private_key_jwt', key: { file: callerPath(flags['private-key-file']) } };
  if (typeof flags['private-key-env'] === 'string') return { method: 'private_key_jwt', key: { env: envName(flags, 'private-key-env') } };
  if (flags['public-client']) return { method: 'none' };
  return undefined;
}

function input(flags: Flags): IdentityProviderInput {
  return { displayName: flags.name as string | undefined, enabled: toggle(flags, 'enable', 'disable'), settings: settingsFrom(flags) };
}

/** Upstream identity providers (issue 45): people sign in here through the company's OpenID Connect or SAML 2.0 provider. */
export const IDP_COMMANDS: Record<string, Command> = {
  'idps:create': {
    usage: `idps:create --id ID --protocol oidc|saml ${SETTINGS_USAGE}`,
    options: { id: { type: 'string' }, protocol: { type: 'string' }, ...SETTING_OPTIONS },
    async run(app, flags) {
      return (await identityProviders(app)).create({ ...input(flags), id: required(flags, 'id'), protocol: required(flags, 'protocol') }, 'cli');
    },
  },
  'idps:update': {
    usage: `idps:update --id ID ${SETTINGS_USAGE} [--enable]`,
    options: { id: { type: 'string' }, ...SETTING_OPTIONS },
    async run(app, flags) {
      return (await identityProviders(app)).update(required(flags, 'id'), input(flags), 'cli');
    },
  },
  'idps:list': {
    usage: 'idps:list',
    options: {},
    async run(app) {
      return (await identityProviders(app)).list();
    },
  },
  'idps:show': {
    usage: 'idps:show --id ID',
    options: { id: { type: 'string' } },
    async run(app, flags) {
      return (await identityProviders(app)).show(required(flags, 'id'));
    },
  },
  'idps:delete': {
    usage: 'idps:delete --id ID',
    options: { id: { type: 'string' } },
    async run(app, flags) {
      return (await identityProviders(app)).delete(required(flags, 'id'), 'cli');
    },
  },
  'users:link': {
    usage: 'users:link --username NAME --idp ID --subject UPSTREAM_SUBJECT',
    options: { username: { type: 'string' }, idp: { type: 'string' }, subject: { type: 'string' } },
    // An administrator's link: the person signs in with that upstream identity from now on (the upstream's sub, or its SAML NameID).
    async run(app, flags) {
      return withUpstreamLinks(app, flags, (links, by, user) => links.link(by, user, required(flags, 'idp'), required(flags, 'subject')));
    },
  },
  'users:unlink': {
    usage: 'users:unlink --username NAME --idp ID --subject UPSTREAM_SUBJECT',
    options: { username: { type: 'string' }, idp: { type: 'string' }, subject: { type: 'string' } },
    async run(app, flags) {
      return withUpstreamLinks(app, flags, (links, by, user) => links.unlink(by, user, required(flags, 'idp'), required(flags, 'subject')));
    },
  },
  'clients:sign-in': {
    usage: 'clients:sign-in --client-id ID [--idp ID ... | --any-idp] [--local | --no-local]',
    options: { 'client-id': { type: 'string' }, idp: { type: 'string', multiple: true }, 'any-idp': { type: 'boolean' }, local: { type: 'boolean' }, 'no-local': { type: 'boolean' } },
    // Which ways the client's people may sign in: some upstream providers only, or upstream only (--no-local): SignInMethods checks the client, the providers and that a way remains, for the CLI and the admin API alike.
    async run(app, flags) {
      const clientId = required(flags, 'client-id');
      if (flags['any-idp'] && flags.idp !== undefined) throw new UsageError('--idp and --any-idp contradict each other');
      const local = toggle(flags, 'local', 'no-local') ?? true;
      return (await signInMethods(app)).setRule(clientId, { identityProviders: flags.idp === undefined ? null : (flags.idp as string[]), localSignIn: local });
    },
  },
};
