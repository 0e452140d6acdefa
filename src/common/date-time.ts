/** RFC 3339 §5.6 date-time: a full date, a time and an offset (Z or ±hh:mm). */
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-](\d{2}):(\d{2}))$/;

/**
 * An RFC 3339 §5.6 date-time, strictly: no date alone, no local time without an offset, no 31
 * February; undefined for anything else. For the filters of the admin API's lists (the audit log,
 * the sessions), where a malformed instant must be refused, never read as "no bound".
 */
export function parseDateTime(value: unknown): Date | undefined {
  const match = typeof value === 'string' ? DATE_TIME.exec(value) : null;
  if (!match) return undefined;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number);
  const offset = match[9] === undefined ? [0, 0] : [Number(match[9]), Number(match[10])];
  const calendar = new Date(Date.UTC(year, month - 1, day));
  if (month < 1 || month > 12 || calendar.getUTCDate() !== day || hour > 23 || minute > 59 || second > 59 || offset[0] > 23 || offset[1] > 59) return undefined;
  // Milliseconds are what the columns keep; further digits are dropped.
  const at = new Date((value as string).replace(/(\.\d{3})\d+/, '$1').replace(/^(\S{10}) /, '$1T'));
  return Number.isNaN(at.getTime()) ? undefined : at;
}
