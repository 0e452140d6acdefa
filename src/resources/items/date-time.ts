/**
 * An RFC 3339 date-time in the UTC form toISOString() gives, so that equal instants are equal text
 * and text order is time order (2024-05-01T11:00:00+02:00 sorts before 2024-05-01T10:00:00.5Z).
 * A leap second counts as :59. Undefined when the value is not a date-time.
 */
export function normalizeDateTime(value: string): string | undefined {
  if (!/^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/.test(value)) return undefined;
  const time = Date.parse(value.replace(/:60(?=[.Zz+-])/, ':59'));
  return Number.isNaN(time) ? undefined : new Date(time).toISOString();
}
