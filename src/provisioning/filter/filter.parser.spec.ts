import { ScimError } from '../http/scim-error.js';
import { compileFilter } from './filter.compiler.js';
import { parseFilter, parsePatchPath } from './filter.parser.js';
import { USER_RESOURCE } from '../schema/resource-types.js';

const ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';

describe('parseFilter (RFC 7644 §3.4.2.2)', () => {
  it('reads the RFC\'s examples', () => {
    expect(parseFilter('userName Eq "john"')).toEqual({ kind: 'compare', path: { attr: 'userName' }, op: 'eq', value: 'john' });
    expect(parseFilter('name.familyName co "O\'Malley"')).toEqual({ kind: 'compare', path: { attr: 'name', sub: 'familyName' }, op: 'co', value: "O'Malley" });
    expect(parseFilter('title pr')).toEqual({ kind: 'present', path: { attr: 'title' } });
    expect(parseFilter(`${ENTERPRISE}:department eq "Tour"`)).toMatchObject({ path: { schema: ENTERPRISE, attr: 'department' } });
    expect(parseFilter('meta.lastModified gt "2011-05-13T04:42:34Z"')).toMatchObject({ op: 'gt', path: { attr: 'meta', sub: 'lastModified' } });
    expect(parseFilter('emails[type eq "work" and value co "@example.com"]')).toMatchObject({ kind: 'valuePath', path: { attr: 'emails' }, filter: { kind: 'and' } });
    expect(parseFilter('active eq true and count gt -1.5e2')).toMatchObject({ kind: 'and', left: { value: true }, right: { value: -150 } });
    expect(parseFilter('userName eq "a \\"quoted\\" name"')).toMatchObject({ value: 'a "quoted" name' });
  });

  it('binds not tighter than and, and and tighter than or (§3.4.2.2, Table 4)', () => {
    expect(parseFilter('a eq "1" or b eq "2" and not (c eq "3")')).toEqual({
      kind: 'or',
      left: { kind: 'compare', path: { attr: 'a' }, op: 'eq', value: '1' },
      right: { kind: 'and', left: { kind: 'compare', path: { attr: 'b' }, op: 'eq', value: '2' }, right: { kind: 'not', filter: { kind: 'compare', path: { attr: 'c' }, op: 'eq', value: '3' } } },
    });
  });

  it.each(['', 'userName', 'userName eq', 'userName eq john', 'userName like "x"', '(userName eq "x"', 'userName eq "x")', 'emails[type eq "work"', 'emails[type[x eq "1"]]', 'a.b.c eq "x"', 'userName eq "unterminated', 'userName eq "x" and', '1abc eq "x"', 'x eq "1" ; drop'])('refuses %j with invalidFilter', (filter) => {
    expect(() => parseFilter(filter)).toThrow(expect.objectContaining({ status: 400, scimType: 'invalidFilter' }) as ScimError);
  });

  it('refuses a filter nested deeper than it will ever need', () => {
    expect(() => parseFilter(`${'('.repeat(100)}a eq "1"${')'.repeat(100)}`)).toThrow(ScimError);
  });
});

describe('parsePatchPath (RFC 7644 §3.5.2)', () => {
  it('reads attribute paths, value filters and a sub-attribute after them', () => {
    expect(parsePatchPath('members[value eq "2819c223"]')).toMatchObject({ path: { attr: 'members' }, filter: { kind: 'compare', value: '2819c223' } });
    expect(parsePatchPath('emails[type eq "work"].value')).toMatchObject({ path: { attr: 'emails' }, subAfterFilter: 'value' });
    expect(parsePatchPath(`${ENTERPRISE}:manager`)).toEqual({ path: { schema: ENTERPRISE, attr: 'manager' } });
  });

  it.each(['', 'emails[type eq "work"]value', 'emails[type eq "work"].value.more', 'name.givenName[x eq "1"]'])('refuses %j with invalidPath', (path) => {
    expect(() => parsePatchPath(path)).toThrow(expect.objectContaining({ scimType: 'invalidPath' }) as ScimError);
  });
});

describe('compileFilter', () => {
  const alice = {
    userName: 'Alice',
    active: true,
    emails: [{ value: 'alice@work.example', type: 'work' }, { value: 'alice@home.example', type: 'home' }],
    name: { givenName: 'Alice' },
    meta: { created: '2026-01-02T00:00:00.000Z' },
    [ENTERPRISE]: { department: 'Sales' },
  };
  const matches = (filter: string): boolean => compileFilter(parseFilter(filter), USER_RESOURCE)(alice);

  it.each([
    ['username eq "alice"', true],
    ['userName ne "alice"', false],
    ['userName sw "AL" and userName ew "CE"', true],
    ['emails co "home.example"', true],
    ['emails[type eq "home" and value sw "alice@home"]', true],
    ['emails[type eq "fax"]', false],
    ['emails.type eq "work"', true],
    ['not (active eq false)', true],
    ['nickName pr', false],
    ['name.givenName pr or nickName pr', true],
    ['meta.created ge "2026-01-02T00:00:00Z" and meta.created lt "2026-01-03T00:00:00+01:00"', true],
    [`${ENTERPRISE}:department eq "sales"`, true],
    ['id eq null', true],
  ])('%s → %s', (filter, expected) => {
    expect(matches(filter)).toBe(expected);
  });

  it.each(['shoeSize eq "1"', 'active co "t"', 'active eq "true"', 'meta.created gt "yesterday"', 'name gt "x"', 'emails[shoe eq "1"]', 'userName eq 1'])('refuses %s with invalidFilter', (filter) => {
    expect(() => compileFilter(parseFilter(filter), USER_RESOURCE)).toThrow(expect.objectContaining({ scimType: 'invalidFilter' }) as ScimError);
  });
});
