import { GROUPS_CLAIM_LIMIT, selected } from './groups-claim.js';
import { Group } from './group.entity.js';

/** Groups named g000, g001, … in name order, as GroupStore.effectiveGroupsOf returns them. */
function named(count: number): Group[] {
  return Array.from({ length: count }, (_, i) => Object.assign(new Group(), { id: `id-${String(i).padStart(3, '0')}`, displayName: `g${String(i).padStart(3, '0')}` }));
}

describe('the groups claim overflow rule (selected)', () => {
  it('carries every group, in name order, up to the limit, and says nothing of overflow', () => {
    const groups = named(GROUPS_CLAIM_LIMIT);
    expect(selected(groups, [])).toEqual({ groups, overflow: false });
  });

  it('past the limit: the limit exactly, the first in name order, and overflow', () => {
    const { groups, overflow } = selected(named(GROUPS_CLAIM_LIMIT + 5), []);
    expect(overflow).toBe(true);
    expect(groups).toHaveLength(GROUPS_CLAIM_LIMIT);
    expect(groups[GROUPS_CLAIM_LIMIT - 1].displayName).toBe(`g0${GROUPS_CLAIM_LIMIT - 1}`);
  });

  it('past the limit, the client\'s required groups the person is in come first, whatever their names; the list stays in name order', () => {
    const all = named(GROUPS_CLAIM_LIMIT + 20);
    const { groups, overflow } = selected(all, ['id-110', 'id-119', 'id-not-theirs']);
    expect(overflow).toBe(true);
    expect(groups).toHaveLength(GROUPS_CLAIM_LIMIT);
    const ids = groups.map((g) => g.id);
    expect(ids).toEqual(expect.arrayContaining(['id-110', 'id-119']));
    expect(ids).not.toContain('id-098');
    expect(ids).toEqual([...ids].sort());
  });
});
