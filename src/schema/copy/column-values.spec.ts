import { canonicalValue, columnKindOf, TableChecksum, targetParameter } from './column-values.js';

describe('the values db:copy carries and compares', () => {
  it('gives a SQLite value and the PostgreSQL value read back the same canonical text', () => {
    expect(canonicalValue('timestamp', '2026-11-27 06:45:38.123')).toBe(canonicalValue('timestamp', new Date('2026-11-27T06:45:38.123Z')));
    expect(canonicalValue('timestamp', '2026-11-27 06:45:38')).toBe('2026-11-27T06:45:38.000Z');
    expect(canonicalValue('boolean', 1n)).toBe(canonicalValue('boolean', true));
    expect(canonicalValue('json', '{"b": [1, {"d": 2, "c": 3}], "a": "ü"}')).toBe(canonicalValue('json', { a: 'ü', b: [1, { c: 3, d: 2 }] }));
    expect(canonicalValue('integer', 9007199254740993n)).toBe('9007199254740993');
    expect(canonicalValue('uuid', 'ABCDEF00-0000-4000-8000-000000000000')).toBe('abcdef00-0000-4000-8000-000000000000');
    expect(canonicalValue('text', null)).toBeNull();
  });

  it('sends instants as UTC and booleans as words', () => {
    expect(targetParameter('timestamp', '2026-11-27 06:45:38.123')).toBe('2026-11-27T06:45:38.123Z');
    expect(targetParameter('boolean', 0n)).toBe('false');
    expect(() => targetParameter('timestamp', 'yesterday')).toThrow('"yesterday" is not an instant');
  });

  it('sums rows whatever their order, and a changed value changes the sum', () => {
    const kinds = [columnKindOf('uuid')!, columnKindOf('varchar')!];
    const rows = [['a', 'x'], ['b', 'y'], ['c', 'z']];
    const forward = new TableChecksum(kinds);
    const backward = new TableChecksum(kinds);
    const changed = new TableChecksum(kinds);
    rows.forEach((row) => forward.add(row));
    [...rows].reverse().forEach((row) => backward.add(row));
    [['a', 'x'], ['b', 'y'], ['c', 'Z']].forEach((row) => changed.add(row));
    expect(backward.digest).toBe(forward.digest);
    expect(changed.digest).not.toBe(forward.digest);
    expect(forward.rows).toBe(3);
  });

  it('knows no type it would copy wrongly', () => {
    expect(columnKindOf('bytea')).toBeUndefined();
  });
});
