import { basicAuth } from './oauth-flow.js';

/** A confidential client as the resource-indicator tests register it through the CLI. */
export interface FormClient {
  id: string;
  secret: string;
}

export interface FormReply {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
}

/** POSTs `form` (repeated names kept, as RFC 8707's `resource` needs) to `path` of `issuer` as `client` with HTTP Basic. */
export async function postForm(issuer: URL, path: string, form: [string, string][], client: FormClient): Promise<FormReply> {
  const response = await fetch(new URL(path, issuer), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basicAuth(client.id, client.secret) },
    body: new URLSearchParams(form).toString(),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

/** RFC 8707 §2: one `resource` parameter per URI. */
export const resourceParams = (resources: readonly string[]): [string, string][] => resources.map((uri): [string, string] => ['resource', uri]);
