import { GUARDS_METADATA, METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants.js';
import { RequestMethod, type Type } from '@nestjs/common';
import { ModulesContainer } from '@nestjs/core';
import { AccessTokenGuard } from '../../src/access/access-token.guard.js';
import { AdminAccess } from '../../src/admin/admin-access.js';
import { ACCESS_REQUIREMENT } from '../../src/access/require-access.decorator.js';
import { TestApp } from '../helpers/test-app.js';

interface Route {
  route: string;
  guarded: boolean;
  requirement: unknown;
}

/**
 * Issue 17: every protected route declares its requirement in one decorator (@RequireScope or
 * @RequireAccess), which brings the one AccessTokenGuard with it. This walks every route of the
 * running application, so a route added with the guard but no requirement, or a protected
 * controller losing its decorator, fails here by name.
 */
describe('protected routes', () => {
  let app: TestApp;
  let routes: Route[];

  beforeAll(async () => {
    app = await TestApp.start();
    routes = [];
    for (const module of app.app.get(ModulesContainer).values()) {
      for (const wrapper of module.controllers.values()) {
        const controller = wrapper.metatype as Type;
        const base = String(Reflect.getMetadata(PATH_METADATA, controller) ?? '');
        for (const name of Object.getOwnPropertyNames(controller.prototype)) {
          const handler = (controller.prototype as Record<string, unknown>)[name];
          if (name === 'constructor' || typeof handler !== 'function' || Reflect.getMetadata(PATH_METADATA, handler) === undefined) continue;
          const guards = [...((Reflect.getMetadata(GUARDS_METADATA, controller) as unknown[]) ?? []), ...((Reflect.getMetadata(GUARDS_METADATA, handler) as unknown[]) ?? [])];
          const method = RequestMethod[Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod];
          routes.push({
            route: `${method} /${[base, String(Reflect.getMetadata(PATH_METADATA, handler))].filter((part) => part !== '' && part !== '/').join('/')}`,
            guarded: guards.includes(AccessTokenGuard),
            requirement: Reflect.getMetadata(ACCESS_REQUIREMENT, handler) ?? Reflect.getMetadata(ACCESS_REQUIREMENT, controller),
          });
        }
      }
    }
  });
  afterAll(() => app?.stop());

  it('finds the application\'s routes (the walk itself works)', () => {
    expect(routes.length).toBeGreaterThan(20);
    expect(routes.map((r) => r.route)).toEqual(expect.arrayContaining(['POST /token', 'GET /authorize', 'POST /register']));
  });

  it('every route behind the access-token guard declares its requirement, and every declared requirement brings the guard', () => {
    expect(routes.filter((r) => r.guarded !== (r.requirement !== undefined))).toEqual([]);
  });

  it('every admin API route is guarded by AdminAccess with a permission, and nothing else under /admin/api is served', () => {
    const admin = routes.filter((r) => r.route.split(' ')[1].startsWith('/admin/api/'));
    expect(admin.length).toBeGreaterThan(3);
    expect(admin.filter((r) => !r.guarded || (r.requirement as { requirement?: unknown }).requirement !== AdminAccess || !(r.requirement as { argument?: { area?: string } }).argument?.area)).toEqual([]);
  });

  it('every admin API route is described in the OpenAPI document, and every described admin route is served', async () => {
    const document = (await (await fetch(app.url('/api/docs/json'))).json()) as { paths: Record<string, Record<string, unknown>> };
    const described = Object.entries(document.paths)
      .filter(([path]) => path.startsWith('/admin/api/'))
      .flatMap(([path, item]) => Object.keys(item).filter((key) => key !== 'servers').map((method) => `${method.toUpperCase()} ${path}`));
    const served = routes.filter((r) => r.route.split(' ')[1].startsWith('/admin/api/')).map((r) => r.route.replace(/:([A-Za-z]+)/g, '{$1}'));
    expect(described.sort()).toEqual(served.sort());
  });

  it('protects exactly the data API, client registration, userinfo, SCIM and the admin API', () => {
    expect(routes.filter((r) => r.guarded && !r.route.split(' ')[1].startsWith('/admin/api/')).map((r) => r.route).sort()).toEqual(
      [
        'DELETE /:collection/:id',
        'DELETE /register/:clientId',
        'GET /:collection',
        'GET /:collection/:id',
        'GET /register/:clientId',
        'OPTIONS /:collection',
        'OPTIONS /:collection/:id',
        'PATCH /:collection/:id',
        'POST /:collection',
        'POST /register',
        'PUT /:collection/:id',
        'PUT /register/:clientId',
        'GET /userinfo',
        'POST /userinfo',
        'DELETE /scim/v2/Groups/:id', 'DELETE /scim/v2/Users/:id', 'GET /scim/v2/Groups', 'GET /scim/v2/Groups/:id',
        'GET /scim/v2/ResourceTypes', 'GET /scim/v2/ResourceTypes/:name', 'GET /scim/v2/Schemas', 'GET /scim/v2/Schemas/:id',
        'GET /scim/v2/ServiceProviderConfig', 'GET /scim/v2/Users', 'GET /scim/v2/Users/:id', 'PATCH /scim/v2/Groups/:id',
        'PATCH /scim/v2/Users/:id', 'POST /scim/v2/Groups', 'POST /scim/v2/Users', 'PUT /scim/v2/Groups/:id', 'PUT /scim/v2/Users/:id',
      ].sort(),
    );
  });
});
