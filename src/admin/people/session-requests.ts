import { isIP } from 'node:net';
import { validate as isUuid } from 'uuid';
import { parseDateTime } from '../../common/date-time.js';
import { ApiError } from '../../http/api-error.js';
import type { LiveSessionFilter } from '../../sessions/session-search.store.js';

/** GET /sessions's filters; with `limit` and `cursor`, every query parameter it takes. */
export const SESSION_FILTERS = ['person', 'client', 'ip', 'device', 'since', 'until'] as const;

/** A client id as the column holds it: printable ASCII without spaces, at most 64. */
const CLIENT_ID = /^[\x21-\x7E]{1,64}$/;
/** The start of an address, up to a separator: `203.0.113.` (that /24), `2001:db8:` (hex digits, dots and colons only). */
const ADDRESS_START = /^[0-9a-f.:]{1,44}[.:]$/;
/** The sessions.device column's length. */
const DEVICE_MAX = 100;

function invalid(description: string): ApiError {
  return new ApiError(400, description, { error: 'invalid_request' });
}

/**
 * GET /admin/api/v1/sessions's filters (issue 48), each given narrowing the list. Anything
 * malformed is a 400 naming the parameter, never read as "no filter": a list from which sessions
 * are ended must not widen on a typo.
 */
export function parseSessionFilter(query: Record<string, unknown>): LiveSessionFilter {
  const filter: LiveSessionFilter = {};
  if (query.person !== undefined) {
    if (typeof query.person !== 'string' || !isUuid(query.person)) throw invalid("person must be a person's id (a UUID)");
    filter.person = query.person.toLowerCase();
  }
  if (query.client !== undefined) {
    if (typeof query.client !== 'string' || !CLIENT_ID.test(query.client)) throw invalid('client must be a client id');
    filter.client = query.client;
  }
  if (query.ip !== undefined) filter.ip = addressFilter(query.ip);
  if (query.device !== undefined) {
    const device = typeof query.device === 'string' ? query.device.trim() : '';
    if (device === '' || device.length > DEVICE_MAX || /\p{Cc}/u.test(device)) throw invalid(`device must be 1 to ${DEVICE_MAX} characters of a device's description, such as Firefox or iPhone`);
    filter.device = device;
  }
  if (query.since !== undefined) filter.since = instant('since', query.since);
  if (query.until !== undefined) filter.until = instant('until', query.until);
  if (filter.since && filter.until && filter.since.getTime() >= filter.until.getTime()) throw invalid('since must be before until');
  return filter;
}

/**
 * An address (IPv4 or IPv6, compared as text, as request.ip gave it), or the start of one ending
 * in `.` or `:`: `203.0.113.` is 203.0.113.0/24, read as a prefix of the column's text (an index
 * range would serve it as well as an exact match, which no CIDR of another length could be).
 */
function addressFilter(value: unknown): LiveSessionFilter['ip'] {
  const text = typeof value === 'string' ? value.trim().toLowerCase() : '';
  if (isIP(text) !== 0) return { exact: text };
  if (ADDRESS_START.test(text)) return { prefix: text };
  throw invalid('ip must be an address (203.0.113.7, 2001:db8::1), or the start of one ending in "." or ":" (203.0.113.)');
}

function instant(name: string, value: unknown): Date {
  const at = parseDateTime(value);
  if (at === undefined) throw invalid(`${name} must be an RFC 3339 date-time with an offset, such as 2026-11-30T08:00:00Z`);
  return at;
}
