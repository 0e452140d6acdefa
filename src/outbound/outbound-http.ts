import ipaddr from 'ipaddr.js';
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request as httpRequest, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { rootCertificates } from 'node:tls';

/** A request to a network the operator did not allow (SSRF protection), refused before connecting. */
export class OutboundAddressRefused extends Error {
  constructor(readonly address: string) {
    super(`refused to connect to ${address}: a private, loopback or otherwise non-public address (set OUTBOUND_ALLOW_PRIVATE_NETWORKS=true to allow)`);
    this.name = 'OutboundAddressRefused';
  }
}

export interface OutboundOptions {
  timeoutMs: number;
  /** Allow loopback, private, link-local and other non-unicast addresses (tests, a closed network). */
  allowPrivateNetworks: boolean;
  /** PEM certificate authorities trusted besides Node's own (OUTBOUND_EXTRA_CA_FILE). */
  extraCa?: string;
}

/** IANA's global unicast space (RFC 4291 §2.4): every other IPv6 prefix is reserved or special. */
const GLOBAL_UNICAST = ipaddr.parseCIDR('2000::/3');

/**
 * An address as the socket would see it, or undefined when it is none. IPv6 goes through the URL
 * parser first: ipaddr.js reads the deprecated IPv4-compatible "::127.0.0.1" as the IPv4-mapped
 * "::ffff:127.0.0.1", while the URL parser and the socket mean "::7f00:1".
 */
function parsedAddress(address: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  try {
    if (isIP(address) === 4) return ipaddr.IPv4.parse(address);
    if (isIP(address) === 6) return ipaddr.IPv6.parse(new URL(`http://[${address}]/`).hostname.slice(1, -1));
  } catch {
    // A zone id (fe80::1%eth0) or anything else the URL parser refuses: not an address we connect to.
  }
  return undefined;
}

/**
 * Only public unicast addresses. An IPv4-mapped IPv6 address (::ffff:a.b.c.d) is judged as its
 * IPv4 address, which is what the socket reaches. Any other IPv6 address must be global unicast
 * (2000::/3) and outside ipaddr.js's special ranges there, which refuses, whatever IPv4 address
 * they embed: IPv4-compatible (::a.b.c.d, deprecated by RFC 4291 §2.5.5.1, still routed as the
 * IPv4 address by some stacks), IPv4-translated (RFC 6145), NAT64 (64:ff9b::/96, 64:ff9b:1::/48),
 * 6to4 (2002::/16) and Teredo (2001::/32).
 */
export function isPublicAddress(address: string): boolean {
  const parsed = parsedAddress(address);
  if (parsed === undefined) return false;
  if (parsed.kind() === 'ipv4') return parsed.range() === 'unicast';
  const ipv6 = parsed as ipaddr.IPv6;
  if (ipv6.isIPv4MappedAddress()) return ipv6.toIPv4Address().range() === 'unicast';
  return ipv6.match(GLOBAL_UNICAST) && ipv6.range() === 'unicast';
}

/**
 * The DNS lookup the connection uses, with every answer checked: the address checked is the one
 * connected to, so a name that resolves to a public address once and to 127.0.0.1 the next time
 * (DNS rebinding) is refused too.
 */
function guardedLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
      if (error) return callback(error, '', 0);
      const allowed = addresses.filter((entry) => allowPrivate || isPublicAddress(entry.address));
      if (allowed.length === 0) return callback(new OutboundAddressRefused(`${hostname} (${addresses.map((entry) => entry.address).join(', ')})`), '', 0);
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, allowed);
      return callback(null, allowed[0].address, allowed[0].family);
    });
  };
}

/**
 * POSTs a form to a URL that a client registered (a back-channel logout URI), with the SSRF
 * protection every outgoing request needs: http or https only, no redirects followed, a bounded
 * time, and no private or loopback address unless allowed. Resolves with the status code; the
 * body is not read (Back-Channel Logout §2.8 only reads the status).
 */
export async function postForm(url: string, form: Record<string, string>, options: OutboundOptions): Promise<number> {
  const body = new URLSearchParams(form).toString();
  return (await send(url, 'POST', { 'content-type': 'application/x-www-form-urlencoded', 'content-length': String(Buffer.byteLength(body)) }, body, 0, options)).status;
}

/** GETs a JSON document (a sector identifier document), with the same protection and at most `maxBytes` of body. */
export async function getJson(url: string, maxBytes: number, options: OutboundOptions): Promise<{ status: number; json: unknown }> {
  const { status, json } = await getJsonWithHeaders(url, maxBytes, options);
  return { status, json };
}

/** getJson with the answer's headers (doctor compares an upstream's Date header, RFC 9110 §6.6.1, with our clock). */
export async function getJsonWithHeaders(url: string, maxBytes: number, options: OutboundOptions): Promise<{ status: number; json: unknown; headers: NodeJS.Dict<string | string[]> }> {
  const { status, headers, body } = await send(url, 'GET', { accept: 'application/json' }, undefined, maxBytes, options);
  let json: unknown;
  try {
    json = JSON.parse(body.toString('utf8'));
  } catch {
    json = undefined;
  }
  return { status, json, headers };
}

/**
 * A fetch() for libraries that take one (openid-client's customFetch): the same protection as
 * postForm and getJson, at most `maxBytes` of answer, no redirects followed (a redirect is
 * answered as it is, and the library refuses it).
 */
export function guardedFetch(maxBytes: number, options: OutboundOptions): (url: string, init?: { method?: string; headers?: HeadersInit; body?: unknown }) => Promise<Response> {
  return async (url, init = {}) => {
    const headers: Record<string, string> = {};
    new Headers(init.headers).forEach((value, name) => (headers[name] = value));
    const body = init.body === undefined || init.body === null ? undefined : String(init.body);
    if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));
    const answer = await send(url, init.method ?? 'GET', headers, body, maxBytes, options);
    const responseHeaders = new Headers();
    for (const [name, value] of Object.entries(answer.headers)) {
      for (const item of Array.isArray(value) ? value : value === undefined ? [] : [value]) responseHeaders.append(name, item);
    }
    const nullBody = answer.status === 204 || answer.status === 304;
    return new Response(nullBody ? null : new Uint8Array(answer.body), { status: answer.status, headers: responseHeaders });
  };
}

/**
 * GETs a text document (an identity provider's SAML metadata), with the same protection and at
 * most `maxBytes` of body, decoded as UTF-8 (XML's default encoding, XML 1.0 §4.3.3).
 */
export async function getText(url: string, maxBytes: number, options: OutboundOptions & { accept?: string }): Promise<{ status: number; text: string }> {
  const { status, body } = await send(url, 'GET', { accept: options.accept ?? 'text/plain' }, undefined, maxBytes, options);
  return { status, text: body.toString('utf8') };
}

function send(url: string, method: string, headers: Record<string, string>, body: string | undefined, maxBytes: number, options: OutboundOptions): Promise<{ status: number; headers: NodeJS.Dict<string | string[]>; body: Buffer }> {
  const target = new URL(url);
  if (target.protocol !== 'https:' && target.protocol !== 'http:') return Promise.reject(new Error(`unsupported scheme ${target.protocol}`));
  const host = target.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) && !options.allowPrivateNetworks && !isPublicAddress(host)) return Promise.reject(new OutboundAddressRefused(host));
  const requestOptions: RequestOptions & { ca?: string[] } = {
    method,
    headers,
    lookup: guardedLookup(options.allowPrivateNetworks),
    // A connection of its own: a pooled keep-alive socket would skip the address check made at connect.
    agent: false,
    timeout: options.timeoutMs,
    ...(options.extraCa ? { ca: [...rootCertificates, options.extraCa] } : {}),
  };
  return new Promise((resolve, reject) => {
    const request = (target.protocol === 'https:' ? httpsRequest : httpRequest)(target, requestOptions, (response) => {
      const chunks: Buffer[] = [];
      let size = 0;
      response.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > maxBytes) {
          if (maxBytes > 0) request.destroy(new Error(`the answer is larger than ${maxBytes} bytes`));
          return;
        }
        chunks.push(chunk);
      });
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) }));
      response.on('error', reject);
    });
    // An idle socket, and the whole exchange: a receiver that trickles bytes is cut off too.
    const deadline = setTimeout(() => request.destroy(new Error(`no answer within ${options.timeoutMs} ms`)), options.timeoutMs);
    request.on('timeout', () => request.destroy(new Error(`no answer within ${options.timeoutMs} ms`)));
    request.on('error', reject);
    request.on('close', () => clearTimeout(deadline));
    request.end(body);
  });
}
