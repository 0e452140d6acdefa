import { validate as isUuid } from 'uuid';
import { parseDateTime } from '../common/date-time.js';
import { DomainError } from '../common/domain-error.js';

/**
 * What the audit log is filtered by (issue 48), the same for the admin API's query parameters and
 * `audit:list`'s flags: every filter given narrows the result (they are ANDed).
 */
export interface AuditFilter {
  /** Who did it: `cli`, `user:<id>`, `client:<id>`, `idp:<id>`. */
  actor?: string;
  /** The event (the row's action): exactly, or every event under a prefix ending in `.` (`client.`). */
  event?: { exact: string } | { prefix: string };
  /** Events about this person: subject `user:<id>`. What they did themselves is `actor=user:<id>`. */
  person?: string;
  /** Events about this client: subject `client:<id>`. What it did itself is `actor=client:<id>`. */
  client?: string;
  /** From this instant on (inclusive). */
  since?: Date;
  /** Before this instant (exclusive). */
  until?: Date;
}

/** The filters as a caller gives them: query parameters or flags, each a string when given. */
export type AuditFilterInput = Partial<Record<keyof AuditFilter, unknown>>;

/** Event names as the code writes them: `client.registered`, `factor.totp.enrolled`. */
const EVENT = /^[a-z][a-z0-9_.]{0,63}$/;
/** An actor or a client id: printable ASCII without spaces, as the columns hold them (at most 100). */
const NAME = /^[\x21-\x7E]{1,100}$/;

function invalid(message: string): DomainError {
  return new DomainError('invalid_audit_filter', message);
}

/** Checks each filter given; anything malformed is refused (400 over HTTP), never read as "no filter". */
export function parseAuditFilter(input: AuditFilterInput): AuditFilter {
  const filter: AuditFilter = {};
  if (input.actor !== undefined) filter.actor = text('actor', input.actor, NAME, 'an actor such as cli, user:<id> or client:<id>');
  if (input.event !== undefined) {
    const event = text('event', input.event, EVENT, 'an event name such as client.registered, or a prefix ending in "." such as client.');
    filter.event = event.endsWith('.') ? { prefix: event } : { exact: event };
  }
  if (input.person !== undefined) {
    const person = text('person', input.person, NAME, "a person's id (a UUID)");
    if (!isUuid(person)) throw invalid("person must be a person's id (a UUID)");
    filter.person = person.toLowerCase();
  }
  if (input.client !== undefined) filter.client = text('client', input.client, /^[\x21-\x7E]{1,93}$/, 'a client id');
  if (input.since !== undefined) filter.since = instant('since', input.since);
  if (input.until !== undefined) filter.until = instant('until', input.until);
  if (filter.since && filter.until && filter.since.getTime() >= filter.until.getTime()) throw invalid('since must be before until');
  return filter;
}

function text(name: string, value: unknown, pattern: RegExp, what: string): string {
  if (typeof value !== 'string' || !pattern.test(value)) throw invalid(`${name} must be ${what}`);
  return value;
}

/** An RFC 3339 date-time, strictly (parseDateTime): no date alone, no local time without an offset, no 31 February. */
function instant(name: string, value: unknown): Date {
  const at = parseDateTime(value);
  if (at === undefined) throw invalid(`${name} must be an RFC 3339 date-time with an offset, such as 2026-11-30T08:00:00Z`);
  return at;
}
