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

/** Only addresses ipaddr.js classifies as public unicast; an IPv4-mapped IPv6 address is judged as its IPv4 address. */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  return parsed.range() === 'unicast';
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
  const { status, body } = await send(url, 'GET', { accept: 'application/json' }, undefined, maxBytes, options);
  let json: unknown;
  try {
    json = JSON.parse(body.toString('utf8'));
  } catch {
    json = undefined;
  }
  return { status, json };
}

function send(url: string, method: string, headers: Record<string, string>, body: string | undefined, maxBytes: number, options: OutboundOptions): Promise<{ status: number; body: Buffer }> {
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
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks) }));
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
