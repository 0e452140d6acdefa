/**
 * Web origins (RFC 6454) as browsers send them in the Origin header: the serialization
 * `scheme "://" host [ ":" port ]` (§6.2), lower case, without the default port, path or slash.
 */

const WEB_SCHEMES = new Set(['http:', 'https:']);

/**
 * `value` when it is exactly the serialization of an http(s) origin, else undefined. Nothing is
 * normalised: `https://App.example.com`, `https://app.example.com/` and `https://app.example.com:443`
 * are not what a browser sends, so they match nothing. `null` (an opaque origin: a sandboxed
 * frame, a file: page, a redirect across origins) is not an origin of anyone's.
 */
export function exactOrigin(value: string | undefined): string | undefined {
  // A wildcard is never part of an origin (WHATWG URL would take `https://*.example.com` as a host).
  if (value === undefined || value === 'null' || value.includes('*')) return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  return WEB_SCHEMES.has(url.protocol) && url.origin === value ? value : undefined;
}

/** The origin of an http(s) URI (a client's redirect URI), or undefined for other schemes (a native app's). */
export function originOfUri(uri: string): string | undefined {
  try {
    const url = new URL(uri);
    return WEB_SCHEMES.has(url.protocol) ? url.origin : undefined;
  } catch {
    return undefined;
  }
}
