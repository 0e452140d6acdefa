import type { INestApplicationContext } from '@nestjs/common';
import type { AccountAdministration } from '../admin/people/account-administration.service.js';
import type { PeopleAdministrator } from '../admin/people/people-administrator.js';
import type { FactorRecords } from '../factors/factor-records.service.js';
import type { User } from '../users/user.entity.js';
import type { ProfileChanges } from '../users/user-profile.js';
import type { UsersService } from '../users/users.service.js';
import { required, UsageError, type Command, type Flags } from './command.js';

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

// Services are imported when a command runs, not with this table: `--help` and a mistyped command
// line are answered without loading Nest, TypeORM and the rest (main.ts loads them after parsing).
const usersService = async (app: INestApplicationContext): Promise<UsersService> => app.get((await import('../users/users.service.js')).UsersService);
const factorRecords = async (app: INestApplicationContext): Promise<FactorRecords> => app.get((await import('../factors/factor-records.service.js')).FactorRecords);

/**
 * The person --username names, and what the command does to them through AccountAdministration:
 * the service the admin API calls too, so the CLI's changes follow the same rules (the operator is
 * an owner: CLI_OPERATOR) and are audited alike, with `cli` as the actor.
 */
async function administer<T>(app: INestApplicationContext, flags: Flags, work: (administration: AccountAdministration, by: PeopleAdministrator, user: User) => Promise<T>): Promise<T> {
  const [{ AccountAdministration }, { CLI_OPERATOR }] = await Promise.all([import('../admin/people/account-administration.service.js'), import('../admin/people/people-administrator.js')]);
  const user = await (await usersService(app)).require(required(flags, 'username'));
  return work(app.get(AccountAdministration), CLI_OPERATOR, user);
}

/** People: made, changed, shown, signed out, locked and deleted on the server (issue 48: the admin API's people routes do the same through the same service). */
export const USER_COMMANDS: Record<string, Command> = {
  'users:create': {
    usage: `users:create --username NAME (--password 'PASSWORD' | --password-stdin) ${PROFILE_USAGE}`,
    options: { username: { type: 'string' }, password: { type: 'string' }, 'password-stdin': { type: 'boolean' }, ...PROFILE_OPTIONS },
    // Audited as user.created by cli.
    async run(app, flags) {
      const [{ AccountAdministration }, { CLI_OPERATOR }] = await Promise.all([import('../admin/people/account-administration.service.js'), import('../admin/people/people-administrator.js')]);
      const changes = profile(flags);
      const user = await app.get(AccountAdministration).create(CLI_OPERATOR, { username: required(flags, 'username'), password: await password(flags), profile: changes });
      return (await usersService(app)).toView(user);
    },
  },
  'users:update': {
    usage: `users:update --username NAME ${PROFILE_USAGE} [--require-mfa | --no-require-mfa]`,
    options: { username: { type: 'string' }, ...PROFILE_OPTIONS, 'require-mfa': { type: 'boolean' }, 'no-require-mfa': { type: 'boolean' } },
    // Audited as user.updated by cli, naming the attributes changed.
    async run(app, flags) {
      if (flags['require-mfa'] && flags['no-require-mfa']) throw new UsageError('--require-mfa and --no-require-mfa contradict each other');
      // --require-mfa: the person must use a second factor; without one, they enrol one right after the password.
      const requireMfa = flags['require-mfa'] ? true : flags['no-require-mfa'] ? false : undefined;
      const changes = { ...profile(flags), requireMfa };
      const updated = await administer(app, flags, (administration, by, user) => administration.update(by, user, changes));
      return (await usersService(app)).toView(updated);
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
      return administer(app, flags, async (administration, by, user) => {
        const removed = await administration.resetFactors(by, user);
        return { username: user.username, one_time_codes_removed: removed.totp, recovery_codes_removed: removed.recoveryCodes, passkeys_removed: removed.passkeys };
      });
    },
  },
  'users:passkey-remove': {
    usage: 'users:passkey-remove --username NAME --passkey ID',
    options: { username: { type: 'string' }, passkey: { type: 'string' } },
    // One passkey (its id from users:show), e.g. one blocked because a copy was detected: the person then enrols a new one (audited as passkey.removed by cli).
    async run(app, flags) {
      const passkey = required(flags, 'passkey');
      return administer(app, flags, async (administration, by, user) => {
        await administration.removePasskey(by, user, passkey);
        return { username: user.username, passkey, removed: true };
      });
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
    // Through the account: their sessions end first, so back-channel logout clients are told. Never the last active owner.
    async run(app, flags) {
      return administer(app, flags, async (administration, by, user) => {
        await administration.delete(by, user);
        return { deleted: true, username: user.username };
      });
    },
  },
  'users:set-password': {
    usage: "users:set-password --username NAME (--password 'PASSWORD' | --password-stdin)",
    options: { username: { type: 'string' }, password: { type: 'string' }, 'password-stdin': { type: 'boolean' } },
    // Every session of the person ends with it (audited as user.password_set by cli).
    async run(app, flags) {
      required(flags, 'username');
      const chosen = await password(flags);
      const user = await administer(app, flags, async (administration, by, person) => {
        await administration.setPassword(by, person, chosen);
        return person;
      });
      const users = await usersService(app);
      return users.toView((await users.findById(user.id)) ?? user);
    },
  },
  'users:sign-out': {
    usage: 'users:sign-out --username NAME',
    options: { username: { type: 'string' } },
    // Ends every session of the person; clients registered for back-channel logout are told by the servers.
    async run(app, flags) {
      return administer(app, flags, async (administration, by, user) => ({ username: user.username, sessions_ended: await administration.endSessions(by, user) }));
    },
  },
  'users:deactivate': {
    usage: 'users:deactivate --username NAME',
    options: { username: { type: 'string' } },
    // Deprovisioning (issue 46): sessions end, every token is revoked, sign-in is refused until users:reactivate. Never the last active owner.
    async run(app, flags) {
      return administer(app, flags, async (administration, by, user) => {
        const result = await administration.lock(by, user);
        return { username: user.username, active: false, sessions_ended: result.sessionsEnded, tokens_revoked: result.tokensRevoked };
      });
    },
  },
  'users:reactivate': {
    usage: 'users:reactivate --username NAME',
    options: { username: { type: 'string' } },
    async run(app, flags) {
      return administer(app, flags, async (administration, by, user) => {
        await administration.unlock(by, user);
        return { username: user.username, active: true };
      });
    },
  },
};
