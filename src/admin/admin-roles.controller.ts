import { Controller, Delete, Get, HttpCode, Param, Put, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { validate as isUuid } from 'uuid';
import { DomainError } from '../common/domain-error.js';
import { UsersService } from '../users/users.service.js';
import { adminCaller, AdminRoute } from './admin-access.js';
import { ADMIN_API, sendAdminJson } from './admin-reply.js';
import { AdminRolesService } from './admin-roles.service.js';
import { ADMIN_ROLES, ADMIN_SCOPES } from '../scopes/admin-scopes.js';

/**
 * Who the caller is (GET /me: any administrator), and who the administrators are: listed by the
 * auditor and the owner, made and unmade by an owner only (PUT and DELETE
 * /people/{id}/roles/{role}), as `users:roles` does on the server.
 */
@Controller(ADMIN_API)
export class AdminRolesController {
  constructor(
    private readonly roles: AdminRolesService,
    private readonly users: UsersService,
  ) {}

  @Get('me')
  @AdminRoute('self', 'read')
  async me(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const caller = adminCaller(request);
    const [kind, id] = caller.actor.split(':') as ['user' | 'client', string];
    const user = kind === 'user' ? await this.users.findById(id) : null;
    sendAdminJson(reply, {
      actor: caller.actor,
      ...(user ? { user: { id: user.id, username: user.username, name: user.name }, roles: await this.roles.rolesOf(user.id) } : { client_id: id }),
      scopes: [...caller.scopes].sort(),
    });
  }

  @Get('roles')
  @AdminRoute('self', 'read')
  catalog(@Res() reply: FastifyReply): void {
    sendAdminJson(reply, { items: Object.entries(ADMIN_ROLES).map(([role, scope]) => ({ role, scope, description: ADMIN_SCOPES[scope] })) });
  }

  @Get('administrators')
  @AdminRoute('system', 'read')
  async administrators(@Res() reply: FastifyReply): Promise<void> {
    const byPerson = new Map<string, string[]>();
    for (const grant of await this.roles.list()) byPerson.set(grant.userId, [...(byPerson.get(grant.userId) ?? []), grant.role]);
    const people = await Promise.all([...byPerson.keys()].map((id) => this.users.findById(id)));
    const items = people.filter((user) => user !== null).map((user) => ({ id: user.id, username: user.username, name: user.name, roles: byPerson.get(user.id) }));
    sendAdminJson(reply, { items: items.sort((a, b) => a.username.localeCompare(b.username)) });
  }

  @Put('people/:id/roles/:role')
  @AdminRoute('system', 'write')
  async grant(@Req() request: FastifyRequest, @Param('id') id: string, @Param('role') role: string, @Res() reply: FastifyReply): Promise<void> {
    const user = await this.person(id);
    const granted = await this.roles.grant(user.id, this.roles.parseRole(role), adminCaller(request));
    sendAdminJson(reply, { id: user.id, username: user.username, roles: await this.roles.rolesOf(user.id) }, granted ? 201 : 200);
  }

  @Delete('people/:id/roles/:role')
  @AdminRoute('system', 'write')
  @HttpCode(204)
  async revoke(@Req() request: FastifyRequest, @Param('id') id: string, @Param('role') role: string): Promise<void> {
    const user = await this.person(id);
    const parsed = this.roles.parseRole(role);
    if (!(await this.roles.revoke(user.id, parsed, adminCaller(request)))) throw new DomainError('user_not_found', `${user.username} does not hold the role ${parsed}`);
  }

  private async person(id: string) {
    const user = isUuid(id) ? await this.users.findById(id) : null;
    if (!user) throw new DomainError('user_not_found', `No person with id "${id}"`);
    return user;
  }
}
