import { CorsPolicy, CorsRoutes } from './cors-routes.js';

const routes = new CorsRoutes({ prefix: '/api/v1/', methodsOf: (path) => (/^\/api\/v1\/notes(\/[^/]+)?$/.test(path) ? 'GET, POST' : undefined) });

describe(CorsRoutes.name, () => {
  describe('ofRoute (the pattern the router matched)', () => {
    it.each([
      ['/.well-known/openid-configuration', CorsPolicy.Public],
      ['/.well-known/oauth-authorization-server', CorsPolicy.Public],
      ['/.well-known/oauth-authorization-server/*', CorsPolicy.Public],
      ['/.well-known/jwks.json', CorsPolicy.Public],
      ['/token', CorsPolicy.OwnClient],
      ['/revoke', CorsPolicy.OwnClient],
      ['/userinfo', CorsPolicy.AnyClient],
      ['/api/v1/:collection', CorsPolicy.AnyClient],
      ['/api/v1/:collection/:id', CorsPolicy.AnyClient],
    ])('%s: %s', (pattern, policy) => {
      expect(routes.ofRoute(pattern)).toBe(policy);
    });

    it.each(['/authorize', '/login', '/consent', '/', '/account/access', '/session/end', '/logout', '/register', '/register/:clientId', '/par', '/introspect', '/health', '/api/docs', undefined])('%s: no CORS', (pattern) => {
      expect(routes.ofRoute(pattern)).toBeUndefined();
    });
  });

  describe('ofPath (a preflight, compared as sent)', () => {
    it('answers the data API with the methods of the path, and nothing for an unknown collection', () => {
      expect(routes.ofPath('/api/v1/notes/abc')).toEqual({ policy: CorsPolicy.AnyClient, methods: 'GET, POST' });
      expect(routes.ofPath('/api/v1/unknown')).toBeUndefined();
    });

    it.each(['/%74oken', '/token/', '/TOKEN', '/login', '/register'])('%s: no preflight answer', (path) => {
      expect(routes.ofPath(path)).toBeUndefined();
    });
  });
});
