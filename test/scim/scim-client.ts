import { readFileSync } from 'node:fs';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { basicAuth } from '../helpers/oauth-flow.js';
import type { RegisteredClient, TestApp } from '../helpers/test-app.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

/** The RFC 7643/7644 schemas of test/scim/schemas, written from the RFCs; the server never reads them. */
function validators(): Record<'user' | 'group' | 'error' | 'list' | 'config' | 'resourceType' | 'schema', ValidateFunction> {
  const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true }));
  for (const name of ['common', 'user', 'group', 'messages']) ajv.addSchema(JSON.parse(readFileSync(new URL(`./schemas/${name}.schema.json`, import.meta.url), 'utf8')) as object);
  const get = (ref: string): ValidateFunction => ajv.getSchema(ref)!;
  return {
    user: get('https://latchkey.test/scim/user.json'),
    group: get('https://latchkey.test/scim/group.json'),
    error: get('https://latchkey.test/scim/messages.json#/$defs/error'),
    list: get('https://latchkey.test/scim/messages.json#/$defs/listResponse'),
    config: get('https://latchkey.test/scim/messages.json#/$defs/serviceProviderConfig'),
    resourceType: get('https://latchkey.test/scim/messages.json#/$defs/resourceType'),
    schema: get('https://latchkey.test/scim/messages.json#/$defs/schema'),
  };
}

export const SCHEMAS = validators();

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are read freely in assertions, after the schema check
export type Json = Record<string, any>;

export interface ScimResponse {
  status: number;
  headers: Headers;
  body: Json;
}

/**
 * Checks a response against the RFC's schema for what it should be: an error body whenever the
 * status is 4xx/5xx, else the given resource kind (every item of a ListResponse too).
 */
export function assertScimShape(response: ScimResponse, kind: 'user' | 'group' | 'config' | 'resourceType' | 'schema' | 'none'): void {
  if (response.status === 204) return;
  expect(response.headers.get('content-type')).toMatch(/^application\/scim\+json/);
  const check = (validate: ValidateFunction, value: unknown): void => {
    if (!validate(value)) throw new Error(`Not a valid SCIM ${kind} response: ${JSON.stringify(validate.errors)}\n${JSON.stringify(value, null, 2)}`);
  };
  if (response.status >= 400) return check(SCHEMAS.error, response.body);
  if (kind === 'none') return;
  if (response.body.schemas?.[0] === 'urn:ietf:params:scim:api:messages:2.0:ListResponse') {
    check(SCHEMAS.list, response.body);
    for (const item of response.body.Resources as unknown[]) check(SCHEMAS[kind], item);
    return;
  }
  check(SCHEMAS[kind], response.body);
}

/** A connector's view of /scim/v2: its bearer token, and every response checked against the RFC schemas. */
export class ScimConnector {
  constructor(
    private readonly app: TestApp,
    readonly token: string,
    private readonly headers: Record<string, string> = {},
  ) {}

  async request(method: string, path: string, body?: unknown, extra: Record<string, string> = {}, kind?: 'user' | 'group' | 'config' | 'resourceType' | 'schema' | 'none'): Promise<ScimResponse> {
    const response = await fetch(this.app.url(`/scim/v2${path}`), {
      method,
      headers: { authorization: `Bearer ${this.token}`, ...(body === undefined ? {} : { 'content-type': 'application/scim+json' }), ...this.headers, ...extra },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await response.text();
    const result = { status: response.status, headers: response.headers, body: (text ? JSON.parse(text) : {}) as Json };
    assertScimShape(result, kind ?? (path.startsWith('/Groups') ? 'group' : path.startsWith('/Users') ? 'user' : 'none'));
    return result;
  }

  get(path: string, extra?: Record<string, string>): Promise<ScimResponse> {
    return this.request('GET', path, undefined, extra);
  }

  post(path: string, body: unknown, extra?: Record<string, string>): Promise<ScimResponse> {
    return this.request('POST', path, body, extra);
  }

  put(path: string, body: unknown, extra?: Record<string, string>): Promise<ScimResponse> {
    return this.request('PUT', path, body, extra);
  }

  patch(path: string, body: unknown, extra?: Record<string, string>): Promise<ScimResponse> {
    return this.request('PATCH', path, body, extra);
  }

  delete(path: string, extra?: Record<string, string>): Promise<ScimResponse> {
    return this.request('DELETE', path, undefined, extra);
  }
}

/** A client an administrator registered for client_credentials with `scope`, and a token it obtained. */
export async function provisioningClient(app: TestApp, scope = 'scim'): Promise<{ client: RegisteredClient; token: string }> {
  const client = await app.createClient({ name: 'Directory connector', redirectUris: [], grantTypes: ['client_credentials'], scope });
  return { client, token: await clientToken(app, client, scope) };
}

export async function clientToken(app: TestApp, client: RegisteredClient, scope: string): Promise<string> {
  const response = await fetch(app.url('/token'), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basicAuth(client.clientId, client.clientSecret!) },
    body: new URLSearchParams({ grant_type: 'client_credentials', scope }).toString(),
  });
  const body = (await response.json()) as Json;
  if (response.status !== 200) throw new Error(`No token: ${response.status} ${JSON.stringify(body)}`);
  return body.access_token as string;
}
