import { clientEditFormOf, clientPatchOf, grantChoicesFor, CLIENT_FIELD_RULES } from './client-edit-form.js';
import { AdminApiRefusal } from './console-errors.js';
import { formErrors, problemOfRefusal } from './form-problems.js';
import { creationOf, newPersonForm, PERSON_FIELD_RULES, profileForm, profileFormOf, profilePatch } from './person-form.js';

describe('the console person forms (person-form.ts)', () => {
  const current = profileFormOf({ name: 'Ada', given_name: null, family_name: 'Lovelace', email: 'ada@example.org', require_mfa: false });

  it('patches only what changed, an emptied field as null (RFC 7396)', () => {
    expect(profilePatch(current, profileForm({ name: ' Ada ', given_name: '', family_name: '', email: 'ada@example.org' }))).toEqual({ family_name: null });
    expect(profilePatch(current, profileForm({ name: 'Ada King', given_name: 'Ada', family_name: 'Lovelace', email: 'ada@example.org', require_mfa: 'yes' }))).toEqual({ name: 'Ada King', given_name: 'Ada', require_mfa: true });
    expect(profilePatch(current, profileForm({ name: 'Ada', family_name: 'Lovelace', email: 'ada@example.org' }))).toEqual({});
  });

  it('asks for a username, and for an address when inviting; sends no empty attribute', () => {
    expect(creationOf(newPersonForm({ username: ' ', invite: 'yes' }))).toEqual({ problems: [expect.objectContaining({ field: 'username' }), expect.objectContaining({ field: 'email' })] });
    expect(creationOf(newPersonForm({ username: ' ada ', name: '', email: '' }))).toEqual({ body: { username: 'ada' } });
    expect(creationOf(newPersonForm({ username: 'ada', name: 'Ada', email: 'ada@example.org', invite: 'yes' }))).toEqual({ body: { username: 'ada', name: 'Ada', email: 'ada@example.org' } });
    // A new form offers the invitation ticked; a posted one without the box is not.
    expect(newPersonForm(undefined).invite).toBe(true);
    expect(newPersonForm({ username: 'ada' }).invite).toBe(false);
  });

  it.each([
    ['Username must be 1 to 64 characters: letters, digits, and . _ @ - (not first).', 'username'],
    ['A user named "ada" already exists.', 'username'],
    ['email must be an email address of at most 254 characters.', 'email'],
    ['givenName must be 1 to 100 characters without control characters.', 'given_name'],
    ['name must be 1 to 200 characters without control characters.', 'name'],
    ['ada is an administrator (owner): only an owner may change them', null],
  ])('puts the API message "%s" beside %s', (message, field) => {
    expect(problemOfRefusal(new AdminApiRefusal(400, 'invalid_request', message), PERSON_FIELD_RULES)).toEqual({ field, message });
  });
});

describe('the console client edit form (client-edit-form.ts)', () => {
  const client = { client_name: 'Payroll', grant_types: ['authorization_code', 'urn:ietf:params:oauth:grant-type:device_code'], redirect_uris: ['https://a.example/cb'], scope: 'openid notes:read' };
  const current = clientEditFormOf(client);

  it('offers every grant type the client holds, so saving drops none unseen', () => {
    expect(grantChoicesFor(client).map((choice) => choice.value)).toEqual(['authorization_code', 'refresh_token', 'client_credentials', 'urn:ietf:params:oauth:grant-type:device_code']);
  });

  it('patches only what changed; an emptied scope is removed', () => {
    const same = { client_name: 'Payroll', grant_types: ['urn:ietf:params:oauth:grant-type:device_code', 'authorization_code'], redirect_uris: '\r\nhttps://a.example/cb\r\n', scope: ' notes:read   openid ' };
    expect(clientPatchOf(current, { ...same, scope: 'openid notes:read' })).toEqual({ patch: {} });
    expect(clientPatchOf(current, { ...same, scope: '' })).toEqual({ patch: { scope: null } });
    expect(clientPatchOf(current, { ...same, client_name: 'Payroll 2', redirect_uris: 'https://a.example/cb\nhttps://b.example/cb' })).toEqual({ patch: { client_name: 'Payroll 2', redirect_uris: ['https://a.example/cb', 'https://b.example/cb'] } });
    expect(clientPatchOf(current, { ...same, client_name: ' ', grant_types: [] })).toEqual({ problems: [expect.objectContaining({ field: 'client_name' }), expect.objectContaining({ field: 'grant_types' })] });
  });

  it.each([
    ['invalid_redirect_uri', 'At least one redirect URI is required for the authorization_code grant.', 'redirect_uris'],
    ['invalid_client_metadata', 'Client name must be 1 to 200 characters.', 'client_name'],
    ['invalid_client_metadata', 'admin:read can be granted only by an owner (admin:owner, or the CLI)', 'scope'],
    ['invalid_client_metadata', 'Unknown scope(s): x. Known scopes: openid', 'scope'],
    ['invalid_client_metadata', 'A public client cannot use the client_credentials grant.', 'grant_types'],
    ['invalid_client_metadata', 'The registration does not meet the FAPI 2.0 Security Profile (x): y.', null],
  ])('puts the API refusal %s "%s" beside %s', (error, message, field) => {
    expect(problemOfRefusal(new AdminApiRefusal(400, error, message), CLIENT_FIELD_RULES)).toEqual({ field, message });
  });

  it('links each summary entry to its field, the first message of a field beside it', () => {
    expect(formErrors([{ field: 'scope', message: 'a' }, { field: null, message: 'b' }, { field: 'scope', message: 'c' }])).toEqual({
      summary: [{ href: '#scope', message: 'a' }, { href: null, message: 'b' }, { href: '#scope', message: 'c' }],
      fields: { scope: 'a' },
    });
  });
});
