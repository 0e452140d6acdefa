import ipaddr from 'ipaddr.js';
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request as httpRequest, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';

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
 * time, and no private or loopback address unless allowed. Resolves with the status code.
 */
export function postForm(url: string, form: Record<string, string>, options: OutboundOptions): Promise<number> {
  const target = new URL(url);
  if (target.protocol !== 'https:' && target.protocol !== 'http:') return Promise.reject(new Error(`unsupported scheme ${target.protocol}`));
  const host = target.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) && !options.allowPrivateNetworks && !isPublicAddress(host)) return Promise.reject(new OutboundAddressRefused(host));
  const body = new URLSearchParams(form).toString();
  const requestOptions: RequestOptions = {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(body) },
    lookup: guardedLookup(options.allowPrivateNetworks),
    timeout: options.timeoutMs,
  };
  return new Promise((resolve, reject) => {
    const request = (target.protocol === 'https:' ? httpsRequest : httpRequest)(target, requestOptions, (response) => {
      // The body is not needed (Back-Channel Logout §2.8 only reads the status); drained, and bounded by the timeout.
      response.resume();
      response.on('end', () => resolve(response.statusCode ?? 0));
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
