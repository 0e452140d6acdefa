import { DomainError } from '../common/domain-error.js';

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * Which redirect URIs a client may register:
 * - absolute, no fragment (RFC 6749 §3.1.2);
 * - https, or http only on a loopback host for development and native apps (RFC 8252 §7.3, RFC 9700 §2.1);
 * - or a private-use scheme in reverse-domain form for native apps (RFC 8252 §7.1), e.g. com.example.app:/cb.
 * Returns a description of the problem, or undefined when the URI is acceptable.
 */
export function redirectUriProblem(value: string): string | undefined {
  if (value.length > 2000) return 'is longer than 2000 characters';
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'is not an absolute URI';
  }
  if (value.includes('#')) return 'must not contain a fragment';
  if (url.username || url.password) return 'must not contain user information';
  const scheme = url.protocol.slice(0, -1);
  if (scheme === 'https') return url.hostname ? undefined : 'has no host';
  if (scheme === 'http') {
    return LOOPBACK_HOSTS.has(url.hostname) ? undefined : 'must use https (http is allowed only on localhost, 127.0.0.1 or [::1])';
  }
  if (/^[a-z][a-z0-9+-]*(\.[a-z0-9+-]+)+$/.test(scheme)) return undefined;
  return `uses the scheme "${scheme}", which is neither https nor a reverse-domain private-use scheme`;
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

export function assertRedirectUrisAcceptable(uris: readonly string[]): void {
  for (const uri of uris) {
    const problem = redirectUriProblem(uri);
    if (problem) throw new DomainError('invalid_redirect_uri', `Redirect URI "${uri}" ${problem}.`);
  }
}
