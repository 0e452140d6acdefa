import { exchangedScope, type ScopeBound } from './exchange-scope.js';

const subject = (...scope: string[]): ScopeBound => ({ name: "the subject token's scope", scope });
const client = (...scope: string[]): ScopeBound => ({ name: "this client's registered scope", scope });

describe('the scope of an exchanged token (RFC 8693 §2.1, §5; RFC 6749 §3.3)', () => {
  describe(exchangedScope.name, () => {
    it.each([
      ['within both: as requested', ['notes:read'], [subject('notes:read', 'notes:write'), client('notes:read', 'tokens:introspect')], ['notes:read']],
      ['omitted: what both allow', undefined, [subject('notes:read', 'notes:write'), client('notes:read', 'tokens:introspect')], ['notes:read']],
      ['omitted, both alike: all of it', undefined, [subject('notes:read', 'notes:write'), client('notes:read', 'notes:write')], ['notes:read', 'notes:write']],
    ])('%s', (_case, requested, bounds, expected) => {
      expect(exchangedScope(requested, bounds)).toEqual(expected);
    });

    it.each([
      ['beyond the subject token alone', ['notes:write'], [subject('notes:read'), client('notes:read', 'notes:write')], /subject token's scope: notes:write/],
      ['beyond the client\'s registration alone', ['notes:write'], [subject('notes:read', 'notes:write'), client('notes:read')], /registered scope: notes:write/],
      ['beyond both', ['notes:delete'], [subject('notes:read'), client('notes:read')], /subject token's scope: notes:delete/],
      ['omitted, and the two share nothing', undefined, [subject('notes:write'), client('notes:read')], /No scope lies within the subject token's scope and this client's registered scope/],
      ['empty', [], [subject('notes:read'), client('notes:read')], /No scope/],
    ])('refuses a scope %s', (_case, requested, bounds, message) => {
      const result = exchangedScope(requested, bounds);
      expect(result).toEqual({ refused: expect.stringMatching(message) });
    });
  });
});
