import { clientEditFormOf, clientPatchOf, grantChoicesFor } from './client-edit-form.js';
import { CLIENT_FIELD_RULES, newClientForm, registrationOf } from './client-form.js';
import { AdminApiRefusal } from './console-errors.js';
import { formCall, formErrors, formFlag, INPUT_OR_UNKNOWN_REFUSALS, NO_ERRORS, problemOfRefusal, titleWith } from './console-forms.js';
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
    ['ada is an administrator (owner): only an owner may change them', undefined],
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
    ['invalid_client_metadata', 'The registration does not meet the FAPI 2.0 Security Profile (x): y.', undefined],
  ])('puts the API refusal %s "%s" beside %s', (error, message, field) => {
    expect(problemOfRefusal(new AdminApiRefusal(400, error, message), CLIENT_FIELD_RULES)).toEqual({ field, message });
  });

});

describe('the console registration form (client-form.ts)', () => {
  it('says what is missing beside its field before asking the API, and sends the redirect URIs one a line', () => {
    expect(registrationOf(newClientForm({ client_name: ' ', client_type: 'public' }))).toEqual({
      problems: [
        { field: 'client_name', message: 'Give the client a name.' },
        { field: 'grant_types', message: 'Choose at least one grant type.' },
      ],
    });
    expect(registrationOf(newClientForm({ client_name: 'Shop', grant_types: 'authorization_code', redirect_uris: 'https://shop.example/cb\r\n\r\n https://shop.example/cb2 ', client_type: 'public' }))).toEqual({
      body: { client_name: 'Shop', grant_types: ['authorization_code'], redirect_uris: ['https://shop.example/cb', 'https://shop.example/cb2'], token_endpoint_auth_method: 'none' },
    });
    // A new form offers the authorization code grant ticked; a posted one holds what was ticked, one value or several.
    expect(newClientForm(undefined).grant_types).toEqual(['authorization_code']);
    expect(newClientForm({ grant_types: ['refresh_token', 'client_credentials', 7] }).grant_types).toEqual(['refresh_token', 'client_credentials']);
  });
});

describe('the console form problems (console-forms.ts)', () => {
  it('keeps every problem for the summary, and the first message of a field for beside it', () => {
    expect(formErrors([{ field: 'scope', message: 'a' }, { message: 'b' }, { field: 'scope', message: 'c' }])).toEqual({
      list: [{ field: 'scope', message: 'a' }, { message: 'b' }, { field: 'scope', message: 'c' }],
      byField: { scope: 'a' },
    });
  });

  it('prefixes the title with "Error:" only when there is a problem', () => {
    expect(titleWith(NO_ERRORS, 'Add a person')).toBe('Add a person');
    expect(titleWith(formErrors([{ message: 'x' }]), 'Add a person')).toBe('Error: Add a person');
  });

  it('places a refusal by its error code before its description', () => {
    const rules = [
      { field: 'redirect_uris', matches: 'invalid_redirect_uri' },
      { field: 'scope', matches: /redirect/ },
    ];
    expect(problemOfRefusal(new AdminApiRefusal(400, 'invalid_redirect_uri', 'A redirect URI must use https'), rules)).toEqual({ field: 'redirect_uris', message: 'A redirect URI must use https' });
  });

  it('hands the form a refusal of what was typed (400, 409; 404 when the form names something) and throws any other', async () => {
    const refusing = (status: number) => () => Promise.reject(new AdminApiRefusal(status, 'x', 'refused'));
    await expect(formCall(() => Promise.resolve(1))).resolves.toEqual({ answer: 1 });
    for (const status of [400, 409]) await expect(formCall(refusing(status))).resolves.toEqual({ refused: expect.objectContaining({ status }) });
    for (const status of [403, 404, 500]) await expect(formCall(refusing(status))).rejects.toMatchObject({ status });
    await expect(formCall(refusing(404), INPUT_OR_UNKNOWN_REFUSALS)).resolves.toEqual({ refused: expect.objectContaining({ status: 404 }) });
    await expect(formCall(() => Promise.reject(new Error('down')))).rejects.toThrow('down');
  });

  it('reads a checkbox as ticked when it is sent at all', () => {
    expect([formFlag('true'), formFlag('yes'), formFlag('on'), formFlag(undefined), formFlag('')]).toEqual([true, true, true, false, false]);
  });
});
