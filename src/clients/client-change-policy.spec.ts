import { DomainError } from '../common/domain-error.js';
import { assertNotWidenedBySelf, assertOwnerMayManage, assertOwnerScopesRespected, holdsOwnerOnlyScope, isOwnerOnlyScope, type ClientEditor, type ClientRights } from './client-change-policy.js';

/** Issue 15, §1: what a client managing itself (RFC 7592) may change, as a pure rule. */
describe('a client managing itself', () => {
  const registered: ClientRights = {
    scope: ['notes:read', 'notes:write'],
    grantTypes: ['authorization_code', 'refresh_token'],
    redirectUris: ['https://app.example/cb', 'https://app.example/cb2'],
    accessTokenType: 'bearer',
  };

  function refusal(next: Partial<ClientRights>): DomainError {
    try {
      assertNotWidenedBySelf(registered, { ...registered, ...next });
    } catch (error) {
      return error as DomainError;
    }
    throw new Error(`accepted ${JSON.stringify(next)}`);
  }

  it('may keep everything or narrow any of it', () => {
    expect(() => assertNotWidenedBySelf(registered, registered)).not.toThrow();
    expect(() =>
      assertNotWidenedBySelf(registered, { scope: ['notes:read'], grantTypes: ['authorization_code'], redirectUris: ['https://app.example/cb2'], accessTokenType: 'bearer' }),
    ).not.toThrow();
  });

  it.each<[string, Partial<ClientRights>, string, RegExp]>([
    ['a data scope', { scope: ['notes:read', 'photos:write'] }, 'scope', /only an administrator can widen/],
    ['clients:register', { scope: ['notes:read', 'clients:register'] }, 'scope', /clients:register can be granted only by an administrator/],
    ['tokens:introspect', { scope: ['tokens:introspect'] }, 'scope', /tokens:introspect can be granted only by an administrator/],
    ['client_credentials', { grantTypes: ['authorization_code', 'client_credentials'] }, 'grant_types', /only an administrator can widen/],
    ['the password grant', { grantTypes: ['password'] }, 'grant_types', /the password grant can be allowed only by an administrator/],
    ['the implicit grant', { grantTypes: ['implicit'] }, 'grant_types', /the implicit grant/],
    ['token exchange (RFC 8693)', { grantTypes: ['urn:ietf:params:oauth:grant-type:token-exchange'] }, 'grant_types', /the urn:ietf:params:oauth:grant-type:token-exchange grant can be allowed only by an administrator/],
    ['a redirect URI', { redirectUris: ['https://app.example/cb', 'https://evil.example/cb'] }, 'redirect_uris', /evil\.example/],
    ['a redirect URI differing only in a trailing slash', { redirectUris: ['https://app.example/cb/'] }, 'redirect_uris', /new redirect URIs/],
    ['another token type', { accessTokenType: 'mac' }, 'access_token_type', /only an administrator can change it/],
    ['a back-channel logout URI', { backchannelLogoutUri: 'https://app.example/bc' }, 'backchannel_logout_uri', /only an administrator can set, move or remove/],
  ])('may not add %s', (_, next, field, why) => {
    const error = refusal(next);
    expect(error).toBeInstanceOf(DomainError);
    expect(error.code).toBe('invalid_client_metadata');
    expect(error.message.startsWith(`${field} `)).toBe(true);
    expect(error.message).toMatch(why);
  });
});

/** Issue 48: owner-only scopes (the admin scopes, scim) are given, and their holders changed, by an owner only. */
describe('owner-only scopes', () => {
  const clientAdmin: ClientEditor = { kind: 'administrator', actor: 'user:a' };
  const owner: ClientEditor = { kind: 'administrator', actor: 'user:o', owner: true };

  it.each(['admin:read', 'admin:owner', 'scim'])('%s is owner-only; a data scope is not', (scope) => {
    expect(isOwnerOnlyScope(scope)).toBe(true);
    expect(holdsOwnerOnlyScope(`notes:read ${scope}`)).toBe(true);
    expect(holdsOwnerOnlyScope('notes:read clients:register')).toBe(false);
  });

  it('a client administrator neither gives one nor manages a client holding one; an owner and the client itself may', () => {
    expect(() => assertOwnerScopesRespected(null, ['scim'], clientAdmin)).toThrow(expect.objectContaining({ code: 'invalid_client_metadata' }));
    expect(() => assertOwnerScopesRespected(['notes:read'], ['notes:read', 'admin:read'], clientAdmin)).toThrow(expect.objectContaining({ code: 'invalid_client_metadata' }));
    expect(() => assertOwnerMayManage('admin:read', clientAdmin)).toThrow(expect.objectContaining({ code: 'admin_client_protected' }));
    expect(() => assertOwnerMayManage('scim', clientAdmin)).toThrow(expect.objectContaining({ code: 'admin_client_protected' }));
    expect(() => assertOwnerMayManage('notes:read', clientAdmin)).not.toThrow();
    expect(() => assertOwnerScopesRespected(['scim'], ['admin:owner'], owner)).not.toThrow();
    expect(() => assertOwnerScopesRespected(['admin:read'], [], { kind: 'self', actor: 'client:x' })).not.toThrow();
  });
});
