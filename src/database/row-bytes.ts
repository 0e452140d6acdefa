/**
 * A rough estimate of what a cached row costs in V8's heap on 64-bit, taken once when the row is
 * kept (NotifiedCache), so that a cache is bounded by memory rather than by a count of rows whose
 * size differs from table to table (issue 47). Rough on purpose, and erring high: strings are
 * counted at 2 bytes a character (V8 keeps ASCII in one), every number as a heap number (small
 * integers take none). Arrays and objects are counted one level deep; deeper ones by their header.
 */

/** The Map's slot for the key, the cache's entry object, and the row object's header. */
export const ENTRY_OVERHEAD_BYTES = 160;
/** A property's slot in its object or array (a pointer). */
const SLOT = 8;
/** A string's header (map, hash, length), before its characters. */
const STRING_HEADER = 16;
/** A boxed double. */
const HEAP_NUMBER = 16;
/** A JSDate object: header, time value and cached fields. */
const DATE = 56;
/** An object's or array's header and backing-store header. */
const OBJECT_HEADER = 32;

export function stringBytes(value: string): number {
  return STRING_HEADER + 2 * value.length;
}

/** The estimate for one entry: its key, the row's values, and the entry's fixed overhead. */
export function rowBytes(key: string, row: Record<string, unknown>): number {
  let bytes = ENTRY_OVERHEAD_BYTES + stringBytes(key);
  // The rows of one statement share their shape (hidden class): property names cost nothing per row.
  for (const name in row) bytes += SLOT + valueBytes(row[name], 1);
  return bytes;
}

function valueBytes(value: unknown, depth: number): number {
  switch (typeof value) {
    case 'string':
      return stringBytes(value);
    case 'number':
    case 'bigint':
      return HEAP_NUMBER;
    case 'object':
      return value === null ? 0 : objectBytes(value, depth);
    default:
      // booleans and undefined are immediates in the slot.
      return 0;
  }
}

function objectBytes(value: object, depth: number): number {
  if (value instanceof Date) return DATE;
  if (ArrayBuffer.isView(value)) return OBJECT_HEADER + value.byteLength;
  if (depth === 0) return OBJECT_HEADER;
  let bytes = OBJECT_HEADER;
  if (Array.isArray(value)) {
    for (const item of value as unknown[]) bytes += SLOT + valueBytes(item, depth - 1);
  } else {
    // A decoded JSON object has a shape of its own: its names count.
    for (const [name, item] of Object.entries(value)) bytes += SLOT + stringBytes(name) + valueBytes(item, depth - 1);
  }
  return bytes;
}
