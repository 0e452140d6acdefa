import { fullFormats } from 'ajv-formats/dist/formats.js';
import { DomainError } from '../common/domain-error.js';

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** RFC 3986 §3 (Appendix A's grammar, as Ajv's `uri` format implements it): an absolute URI. */
const isAbsoluteUri = fullFormats.uri as (value: string) => boolean;

/** RFC 3986 Appendix B: scheme, authority, path, query and fragment of a URI already known to be valid. */
const URI_PARTS = /^([^:/?#]+):(?:\/\/([^/?#]*))?([^?#]*)(?:\?[^#]*)?(?:#.*)?$/;

/** RFC 3986 §3.2: [ userinfo "@" ] host [ ":" port ]. */
const AUTHORITY = /^(?:([^@]*)@)?(\[[^\]]*\]|[^:]*)(?::(\d*))?$/;

export interface UriParts {
  /** Lower-case (schemes are case-insensitive, RFC 3986 §3.1). */
  scheme: string;
  /** Lower-case; undefined when there is no authority. */
  host?: string;
}

/**
 * What is wrong with `value` as an absolute URI per RFC 3986 that a browser will follow to the
 * host it names: no control characters or whitespace (a browser strips or encodes them, and a
 * CR or LF would split a Location header), ASCII only, and for http(s) an authority with a
 * non-empty host and no user information (WHATWG URL parsing turns `https:///cb` into
 * `https://cb/`). The value is stored and later compared exactly as given, never normalised.
 */
export function absoluteUriProblem(value: string): { problem: string } | UriParts {
  if (value.length > 2000) return { problem: 'is longer than 2000 characters' };
  // eslint-disable-next-line no-control-regex
  if (/[\x00-\x20\x7F]/.test(value)) return { problem: 'contains a control character or whitespace' };
  if (!/^[A-Za-z][A-Za-z0-9+.-]*:/.test(value)) return { problem: 'is not an absolute URI' };
  if (!isAbsoluteUri(value)) return { problem: 'is not a URI as RFC 3986 defines it (ASCII only; other characters percent-encoded)' };
  const [, rawScheme, authority] = URI_PARTS.exec(value)!;
  const scheme = rawScheme.toLowerCase();
  if (authority === undefined) return scheme === 'http' || scheme === 'https' ? { problem: 'has no host' } : { scheme };
  const [, userinfo, host, port] = AUTHORITY.exec(authority) ?? [];
  if (userinfo !== undefined) return { problem: 'must not contain user information' };
  if (!host && (scheme === 'http' || scheme === 'https')) return { problem: 'has no host' };
  if (port !== undefined && port !== '' && !(Number(port) >= 1 && Number(port) <= 65535)) return { problem: 'has a port outside 1–65535' };
  return { scheme, host: host.toLowerCase() };
}

/**
 * Which redirect URIs a client may register:
 * - an absolute RFC 3986 URI without a fragment (RFC 6749 §3.1.2), as absoluteUriProblem checks;
 * - https, or http only on a loopback host for development and native apps (RFC 8252 §7.3, RFC 9700 §2.1);
 * - or a private-use scheme in reverse-domain form for native apps (RFC 8252 §7.1), e.g. com.example.app:/cb.
 * Returns a description of the problem, or undefined when the URI is acceptable.
 */
export function redirectUriProblem(value: string): string | undefined {
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(value)?.[1].toLowerCase();
  if (scheme !== undefined && scheme !== 'https' && scheme !== 'http' && !/^[a-z][a-z0-9+-]*(\.[a-z0-9+-]+)+$/.test(scheme)) {
    return `uses the scheme "${scheme}", which is neither https nor a reverse-domain private-use scheme`;
  }
  const uri = absoluteUriProblem(value);
  if ('problem' in uri) return uri.problem;
  if (value.includes('#')) return 'must not contain a fragment';
  if (uri.scheme === 'http' && !LOOPBACK_HOSTS.has(uri.host!)) return 'must use https (http is allowed only on localhost, 127.0.0.1 or [::1])';
  return undefined;
}

/** `http://127.0.0.1[:port]` or `http://[::1][:port]`, and what follows the authority. */
const LOOPBACK_IP_REDIRECT = /^http:\/\/(127\.0\.0\.1|\[::1\])(?::(\d{1,5}))?([/?].*)?$/s;

/**
 * Whether `requested` names one of the client's `registered` redirect URIs. Exact string
 * comparison (RFC 9700 §2.1, RFC 3986 §6.2.1), with the one exception the RFCs require: for a
 * loopback IP redirect URI of a native app, any port is accepted (RFC 8252 §7.3), because the app
 * listens on whatever port the operating system gives it. The scheme, the address (127.0.0.1 and
 * [::1] literally; not `localhost`, which RFC 8252 §8.3 advises against) and everything after the
 * port must still be identical.
 */
export function redirectUriMatches(registered: readonly string[], requested: string): boolean {
  if (registered.includes(requested)) return true;
  const request = LOOPBACK_IP_REDIRECT.exec(requested);
  if (!request || !validPort(request[2])) return false;
  return registered.some((uri) => {
    const candidate = LOOPBACK_IP_REDIRECT.exec(uri);
    return candidate !== null && candidate[1] === request[1] && (candidate[3] ?? '') === (request[3] ?? '');
  });
}

/** No port, or 1–65535 written without leading zeros. */
function validPort(port: string | undefined): boolean {
  return port === undefined || (/^[1-9]\d*$/.test(port) && Number(port) <= 65535);
}

/**
 * The problem with a descriptive URL of a client (client_uri, logo_uri, policy_uri, tos_uri; RFC
 * 7591 §2), or undefined. These are shown to the person as links, so only absolute https URLs
 * with a host: no javascript:, data: or plain-http links on the consent page.
 */
export function descriptiveUriProblem(value: string): string | undefined {
  const uri = absoluteUriProblem(value);
  if ('problem' in uri) return uri.problem;
  if (uri.scheme !== 'https') return 'must be an https URL';
  return undefined;
}

export function assertRedirectUrisAcceptable(uris: readonly string[]): void {
  for (const uri of uris) {
    const problem = redirectUriProblem(uri);
    if (problem) throw new DomainError('invalid_redirect_uri', `Redirect URI ${JSON.stringify(uri)} ${problem}.`);
  }
}
