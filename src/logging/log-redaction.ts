/**
 * Query parameters whose values are credentials or grants. Latchkey never puts them in a URL, but a
 * caller may (an access_token in the query is refused, RFC 6750 §2.3 / RFC 9700 §2.5), and the
 * request line is logged before that refusal. One does by design: verification_uri_complete
 * carries the user_code (RFC 8628 §3.3.1), which approves a device until it expires.
 */
const SECRET_PARAMETERS = new Set(['access_token', 'refresh_token', 'code', 'code_verifier', 'client_secret', 'password', 'token', 'id_token', 'assertion', 'device_code', 'user_code']);

/** The URL with the value of every secret-bearing query parameter replaced, for the request log line. */
export function redactUrl(url: string | undefined): string {
  if (!url) return '';
  const query = url.indexOf('?');
  if (query < 0) return url;
  const parameters = url
    .slice(query + 1)
    .split('&')
    .map((pair) => {
      const name = pair.split('=', 1)[0];
      let decoded = name;
      try {
        decoded = decodeURIComponent(name.replace(/\+/g, ' '));
      } catch {
        // A malformed escape is logged as sent; it cannot be a well-formed secret parameter name.
      }
      return SECRET_PARAMETERS.has(decoded.toLowerCase()) ? `${name}=[redacted]` : pair;
    });
  return `${url.slice(0, query)}?${parameters.join('&')}`;
}

/**
 * pino's redaction, as defence in depth behind the serializers (which already log no headers):
 * should anything log a request or response object whole, these fields never reach the line.
 */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["proxy-authorization"]',
  'res.headers["set-cookie"]',
  'res.headers.location',
  'headers.authorization',
  'headers.cookie',
  'body.password',
  'body.client_secret',
  'body.code',
  'body.code_verifier',
  'body.refresh_token',
  'body.token',
  'body.device_code',
  'body.user_code',
  'password',
  'client_secret',
];
