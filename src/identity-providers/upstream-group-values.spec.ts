import { groupsOverflowed, UPSTREAM_GROUPS_LIMIT, upstreamGroupValues } from './upstream-group-values.js';

describe('upstreamGroupValues', () => {
  it.each([
    ['an array of strings', ['Sales', 'Staff'], ['Sales', 'Staff']],
    ['a space-separated string', 'Sales  Staff', ['Sales', 'Staff']],
    ['a comma-separated string', 'Sales,Staff, Ops', ['Sales', 'Staff', 'Ops']],
    ['an absent claim (no groups)', undefined, []],
    ['repeats and blanks', ['Sales', ' Sales ', '', 'Staff'], ['Sales', 'Staff']],
    ['non-strings in an array', ['Sales', 7, { a: 1 }, null], ['Sales']],
  ])('reads %s', (_, raw, values) => {
    expect(upstreamGroupValues(raw)?.values).toEqual(values);
  });

  it('says nothing (null) for a value of another shape, so nothing is changed', () => {
    expect(upstreamGroupValues(42)).toBeNull();
    expect(upstreamGroupValues({ groups: ['Sales'] })).toBeNull();
  });

  it('ignores values longer than 256 characters', () => {
    expect(upstreamGroupValues(['x'.repeat(257), 'y'.repeat(256)])?.values).toEqual(['y'.repeat(256)]);
  });

  it(`reads the first ${UPSTREAM_GROUPS_LIMIT} values and says it truncated`, () => {
    const many = Array.from({ length: UPSTREAM_GROUPS_LIMIT + 3 }, (_, i) => `g${i}`);
    const read = upstreamGroupValues(many)!;
    expect(read).toMatchObject({ received: UPSTREAM_GROUPS_LIMIT + 3, truncated: true });
    expect(read.values).toHaveLength(UPSTREAM_GROUPS_LIMIT);
    expect(read.values.at(-1)).toBe(`g${UPSTREAM_GROUPS_LIMIT - 1}`);
    expect(upstreamGroupValues(many.slice(0, UPSTREAM_GROUPS_LIMIT))!.truncated).toBe(false);
  });

  describe(groupsOverflowed.name, () => {
    it.each([
      ['Entra ID\'s groups overage: _claim_names names the claim', { _claim_names: { groups: 'src1' }, _claim_sources: { src1: { endpoint: 'https://graph.microsoft.com/v1.0/users/x/getMemberObjects' } } }, 'groups', true],
      ["Entra ID's hasgroups in place of the claim", { hasgroups: true }, 'groups', true],
      ['another claim distributed', { _claim_names: { roles: 'src1' } }, 'groups', false],
      ['a plain list', { groups: ['Sales'] }, 'groups', false],
      ['no claim at all', {}, 'groups', false],
    ])('%s', (_name, claims, source, expected) => {
      expect(groupsOverflowed(claims as Record<string, unknown>, source)).toBe(expected);
    });
  });
});
