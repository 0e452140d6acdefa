import type { INestApplicationContext } from '@nestjs/common';
import type { AdminRolesService } from '../admin/admin-roles.service.js';
import type { UsersService } from '../users/users.service.js';
import { required, UsageError, type Command } from './command.js';

const adminRoles = async (app: INestApplicationContext): Promise<AdminRolesService> => app.get((await import('../admin/admin-roles.service.js')).AdminRolesService);
const usersService = async (app: INestApplicationContext): Promise<UsersService> => app.get((await import('../users/users.service.js')).UsersService);

/** Administrator roles (issue 48): the first owner is made here, on the server; owners then manage the rest through the admin API too. */
export const ADMIN_ROLE_COMMANDS: Record<string, Command> = {
  'users:roles': {
    usage: 'users:roles --username NAME [--grant auditor|helpdesk|client-admin|owner ...] [--revoke ROLE ...]',
    options: { username: { type: 'string' }, grant: { type: 'string', multiple: true }, revoke: { type: 'string', multiple: true } },
    // Without --grant or --revoke, shows the person's roles. Each change is audited as admin_role.granted / admin_role.revoked by cli.
    async run(app, flags) {
      const user = await (await usersService(app)).require(required(flags, 'username'));
      const roles = await adminRoles(app);
      const parse = (values: unknown) => ((values as string[] | undefined) ?? []).map((value) => {
        try {
          return roles.parseRole(value);
        } catch (error) {
          throw new UsageError((error as Error).message);
        }
      });
      const grants = parse(flags.grant);
      const revokes = parse(flags.revoke);
      const both = grants.filter((role) => revokes.includes(role));
      if (both.length > 0) throw new UsageError(`--grant and --revoke both name ${both.join(', ')}`);
      for (const role of grants) await roles.grant(user.id, role, 'cli');
      // The CLI may remove the last owner: whoever runs it can grant the role again from this machine.
      for (const role of revokes) await roles.revoke(user.id, role, 'cli', { allowNoOwner: true });
      return { username: user.username, roles: await roles.rolesOf(user.id) };
    },
  },
};
