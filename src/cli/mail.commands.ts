import type { INestApplicationContext } from '@nestjs/common';
import type { AccountEmails, LinkDelivery } from '../email-links/account-emails.service.js';
import { CommandFailed, required, UsageError, type Command, type Flags, type StandaloneCommand } from './command.js';

/**
 * Runs `work` on the CLI's modules plus the mail commands' (the links and the SMTP transport), which
 * CliModule does not load for the other commands. Standalone for that reason only: the application
 * context is the CLI's own, as for every other command.
 */
async function withAccountEmails(name: string, work: (emails: AccountEmails) => Promise<LinkDelivery>): Promise<LinkDelivery> {
  const [{ NestFactory }, { CliModule }, { MailCommandsModule }, { AccountEmails }, { DeliveryRefused }] = await Promise.all([
    import('@nestjs/core'),
    import('./cli.module.js'),
    import('../mail/mail-commands.module.js'),
    import('../email-links/account-emails.service.js'),
    import('../email-links/delivery-refused.js'),
  ]);
  const app: INestApplicationContext = await NestFactory.createApplicationContext({ module: MailCommandsModule, imports: [await CliModule.forCommand(name)] }, { logger: false, abortOnError: false });
  try {
    return await work(app.get(AccountEmails));
  } catch (error) {
    throw error instanceof DeliveryRefused ? new CommandFailed(error.message) : error;
  } finally {
    await app.close();
  }
}

function email(flags: Flags): string {
  const value = required(flags, 'email');
  if (!/^[^\s@]+@[^\s@]+$/.test(value)) throw new UsageError('--email must be an email address');
  return value;
}

/** Issue 46: the messages an administrator sends, or, with --print-link, the link to hand over (SMTP off, or no mailbox). */
export const MAIL_COMMANDS: Record<string, Command> = {
  'users:invite': {
    standalone: true,
    usage: 'users:invite --username NAME --email ADDRESS [--print-link]',
    options: { username: { type: 'string' }, email: { type: 'string' }, 'print-link': { type: 'boolean' } },
    // Creates the person without a password (or takes one who has none yet, e.g. from SCIM) and sends a link to choose it (INVITATION_LINK_SECONDS, default 7 days).
    async run(flags) {
      const username = required(flags, 'username');
      const address = email(flags);
      return withAccountEmails('users:invite', (emails) => emails.invite(username, address, 'cli', { printLink: flags['print-link'] === true }));
    },
  } satisfies StandaloneCommand,
  'users:verify-email': {
    standalone: true,
    usage: 'users:verify-email --username NAME [--print-link]',
    options: { username: { type: 'string' }, 'print-link': { type: 'boolean' } },
    // A link that confirms the person's current address: email_verified becomes true if the address is still the same when it is used.
    async run(flags) {
      const username = required(flags, 'username');
      return withAccountEmails('users:verify-email', (emails) => emails.sendVerification(username, 'cli', { printLink: flags['print-link'] === true }));
    },
  } satisfies StandaloneCommand,
};
