/** Who may read a route's answers from a page of another origin (src/cors/cors.hook.ts). */
export const CorsPolicy = {
  /** Public documents (discovery, the JWKS): any page, `Access-Control-Allow-Origin: *`. */
  Public: 'public',
  /** Called with an access token (userinfo, the data API): a page at an origin of some client's, or a configured one. */
  AnyClient: 'any-client',
  /** Called by a client naming itself (/token, /revoke): a page at an origin of that client's, or a configured one. */
  OwnClient: 'own-client',
} as const;
export type CorsPolicy = (typeof CorsPolicy)[keyof typeof CorsPolicy];

export interface CorsRoute {
  policy: CorsPolicy;
  /** What a preflight may ask for (Access-Control-Allow-Methods). */
  methods: string;
}

const PUBLIC_DOCUMENT: CorsRoute = { policy: CorsPolicy.Public, methods: 'GET, HEAD' };
const OWN_CLIENT_FORM: CorsRoute = { policy: CorsPolicy.OwnClient, methods: 'POST' };

/** RFC 8414 §3.1: the metadata of an issuer with a path, below the well-known one. */
const PATH_METADATA_PREFIX = '/.well-known/oauth-authorization-server/';

/**
 * The only routes a page of another origin may read, each with its rule; every other route (the
 * pages and forms that use the session cookie, /authorize, /register and /par, whose callers are
 * servers, /introspect, the health and metrics endpoints) answers no CORS at all. Keyed by route
 * pattern as Fastify registers it.
 */
const ROUTES: ReadonlyMap<string, CorsRoute> = new Map([
  ['/.well-known/openid-configuration', PUBLIC_DOCUMENT],
  ['/.well-known/oauth-authorization-server', PUBLIC_DOCUMENT],
  ['/.well-known/oauth-authorization-server/*', PUBLIC_DOCUMENT],
  ['/.well-known/jwks.json', PUBLIC_DOCUMENT],
  ['/token', OWN_CLIENT_FORM],
  ['/revoke', OWN_CLIENT_FORM],
  ['/userinfo', { policy: CorsPolicy.AnyClient, methods: 'GET, POST' }],
]);

/** The data API as the application mounts it. */
export interface CorsApiRoutes {
  /** Its path prefix, /api/v1/. */
  prefix: string;
  /** The methods a concrete path of it answers, or undefined when it names no collection (ResourceRoutes). */
  methodsOf(path: string): string | undefined;
}

/** Which rule applies where. */
export class CorsRoutes {
  constructor(private readonly api: CorsApiRoutes) {}

  /**
   * The rule of the route the router matched, by its pattern (so /%74oken, which the router
   * serves as /token, is /token here too); undefined for no route (404, 405) and routes without CORS.
   */
  ofRoute(pattern: string | undefined): CorsPolicy | undefined {
    if (pattern === undefined) return undefined;
    return ROUTES.get(pattern)?.policy ?? (pattern.startsWith(this.api.prefix) ? CorsPolicy.AnyClient : undefined);
  }

  /**
   * The rule for the concrete path of a preflight, which no route matched (OPTIONS /token) or the
   * data API's own OPTIONS route did. Compared as sent: a path spelled otherwise gets no preflight
   * answer, and the browser then refuses the request it was asked about.
   */
  ofPath(path: string): CorsRoute | undefined {
    const route = ROUTES.get(path);
    if (route !== undefined) return route;
    if (path.startsWith(PATH_METADATA_PREFIX)) return PUBLIC_DOCUMENT;
    if (!path.startsWith(this.api.prefix)) return undefined;
    const methods = this.api.methodsOf(path);
    return methods === undefined ? undefined : { policy: CorsPolicy.AnyClient, methods };
  }
}
