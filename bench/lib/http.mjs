/**
 * A lean HTTP/1.1 client for the flow drivers: keep-alive connections (one agent per server), no
 * redirects followed, the body read as text. Node's fetch costs several times more CPU per request,
 * which on a 2-core machine would make the load generator, not the server, the bottleneck.
 */
import { Agent, request as httpRequest } from 'node:http';

const agents = new Map();

function agentFor(origin) {
  let agent = agents.get(origin);
  if (!agent) {
    agent = new Agent({ keepAlive: true, maxSockets: 256 });
    agents.set(origin, agent);
  }
  return agent;
}

/** One request; resolves with { status, headers, body }. `body` is a string (form or JSON). */
export function request(baseUrl, { method = 'GET', path, headers = {}, body }) {
  const url = new URL(path, baseUrl);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      { method, headers: body === undefined ? headers : { ...headers, 'content-length': Buffer.byteLength(body) }, agent: agentFor(url.origin) },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: text }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

export function closeAgents() {
  for (const agent of agents.values()) agent.destroy();
  agents.clear();
}

/** Throws with the response's status and body when it is not the expected one. */
export function expectStatus(response, expected, what) {
  const ok = Array.isArray(expected) ? expected.includes(response.status) : response.status === expected;
  if (!ok) throw new Error(`${what}: expected ${expected}, got ${response.status} ${response.body.slice(0, 300)}`);
  return response;
}

/**
 * Throws unless the token response carries an ID token with this header alg and nonce. Only decoded,
 * not verified: a cheap check that every exchange signed one, with the algorithm compared.
 */
export function expectIdToken(tokens, { alg, nonce }) {
  if (typeof tokens.id_token !== 'string') throw new Error(`code exchange: no id_token in ${Object.keys(tokens).join(', ')}`);
  const [header, payload] = tokens.id_token.split('.').slice(0, 2).map((part) => JSON.parse(Buffer.from(part, 'base64url').toString('utf8')));
  if (header.alg !== alg) throw new Error(`code exchange: id_token signed with ${header.alg}, expected ${alg}`);
  if (payload.nonce !== nonce) throw new Error(`code exchange: id_token nonce ${payload.nonce}, expected ${nonce}`);
  return tokens;
}

/** Cookies as a browser keeps them for one origin: name → value, from Set-Cookie headers. */
export class CookieJar {
  cookies = new Map();

  store(response) {
    for (const line of response.headers['set-cookie'] ?? []) {
      const [pair] = line.split(';');
      const index = pair.indexOf('=');
      const name = pair.slice(0, index).trim();
      const value = pair.slice(index + 1).trim();
      if (value === '' || /max-age=0/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return response;
  }

  header() {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }
}

export function basicAuth(clientId, secret) {
  const encode = (value) => encodeURIComponent(value).replace(/%20/g, '+');
  return `Basic ${Buffer.from(`${encode(clientId)}:${encode(secret)}`).toString('base64')}`;
}

export const FORM = 'application/x-www-form-urlencoded';
