import { AdminApiRefusal } from './console-errors.js';
import { problemOfRefusal } from './console-forms.js';
import { fromFilesOf, newProviderForm, NONE_FROM_FILES, providerFormOf, type IdentityProviderView } from './identity-provider-form.js';
import { PROVIDER_FIELDS, providerRequest } from './identity-provider-request.js';

const stored = (settings: IdentityProviderView['settings'], protocol: 'oidc' | 'saml' = 'oidc'): IdentityProviderView => ({ id: 'contoso', name: 'Contoso', protocol, enabled: true, settings });

describe('providerRequest (the identity provider form as the admin API takes it)', () => {
  it('sends a new OpenID Connect provider with its secret by variable, its domains in lower case and the default scope', () => {
    const form = { ...newProviderForm('oidc'), id: 'contoso', domains: 'Contoso.com, contoso.fr', issuer: 'https://login.contoso.com', client_id: 'latchkey', secret_env: 'LATCHKEY_IDP_CONTOSO', scope: '' };
    expect(providerRequest(form, undefined, NONE_FROM_FILES)).toEqual({
      body: {
        id: 'contoso',
        protocol: 'oidc',
        enabled: true,
        settings: {
          domains: ['contoso.com', 'contoso.fr'],
          create_accounts: true,
          trust_email: false,
          trust_authentication_level: false,
          pass_login_hint: true,
          sign_out_upstream: true,
          groups_match: 'name',
          groups_create: false,
          issuer: 'https://login.contoso.com',
          client_id: 'latchkey',
          client_auth: { method: 'client_secret_basic', secret: { env: 'LATCHKEY_IDP_CONTOSO' } },
          scope: 'openid email profile',
          userinfo: true,
          groups_claim: null,
        },
      },
    });
  });

  it('lists what is missing, each beside its field, before asking the API', () => {
    expect(providerRequest(newProviderForm('oidc'), undefined, NONE_FROM_FILES)).toEqual({
      problems: [
        { field: 'id', message: 'Give the provider an id, such as contoso.' },
        { field: 'issuer', message: "Give the provider's issuer URL." },
        { field: 'client_id', message: 'Give the client id the provider gave Latchkey.' },
        { field: 'secret_env', message: 'Name the environment variable that holds the client secret, such as LATCHKEY_IDP_CONTOSO_SECRET.' },
      ],
    });
    expect(providerRequest({ ...newProviderForm('saml'), id: 'adfs' }, undefined, NONE_FROM_FILES)).toEqual({ problems: [{ field: 'metadata_url', message: "Give the URL of the provider's SAML metadata." }] });
  });

  it('keeps a secret read from a file while the method stays and no variable is named; names the variable otherwise', () => {
    const current = stored({ issuer: 'https://login.contoso.com', client_id: 'latchkey', client_auth: { method: 'client_secret_post', secret: { file: '/run/secrets/contoso' } } });
    const files = fromFilesOf(current);
    const form = providerFormOf(current);
    expect(form.secret_env).toBe('');
    const kept = providerRequest(form, current, files);
    expect('body' in kept && (kept.body.settings as Record<string, unknown>).client_auth).toBeUndefined();
    const changed = providerRequest({ ...form, client_auth_method: 'client_secret_basic' }, current, files);
    expect(changed).toEqual({ problems: [{ field: 'secret_env', message: expect.stringMatching(/^Name the environment variable/) }] });
    const none = providerRequest({ ...form, client_auth_method: 'none' }, current, files);
    expect('body' in none && (none.body.settings as Record<string, unknown>).client_auth).toEqual({ method: 'none' });
  });

  it('replaces SAML metadata read from a file by a URL given, and clears the signing key when both of its fields are emptied', () => {
    const fromFile = stored({ metadata_file: '/etc/idp.xml', sp_signing_key: null, sp_signing_certificate: null }, 'saml');
    const url = providerRequest({ ...providerFormOf(fromFile), metadata_url: 'https://adfs.contoso.com/metadata' }, fromFile, fromFilesOf(fromFile));
    expect('body' in url && url.body.settings).toMatchObject({ metadata_url: 'https://adfs.contoso.com/metadata', metadata_file: null });
    expect(providerRequest(providerFormOf(fromFile), fromFile, fromFilesOf(fromFile))).toMatchObject({ body: { name: 'Contoso', enabled: true } });

    const signing = stored({ metadata_url: 'https://adfs.contoso.com/metadata', sp_signing_key: { env: 'LATCHKEY_IDP_KEY' }, sp_signing_certificate: { env: 'LATCHKEY_IDP_CERT' } }, 'saml');
    const cleared = providerRequest({ ...providerFormOf(signing), sp_signing_key_env: '', sp_signing_certificate_env: '' }, signing, fromFilesOf(signing));
    expect('body' in cleared && cleared.body.settings).toMatchObject({ sp_signing_key: null, sp_signing_certificate: null });
  });

  it.each([
    ['issuer must be an https URL', 'issuer'],
    ['client_id is required: the client id this server was given by the upstream', 'client_id'],
    ['client_auth.secret must name an environment variable LATCHKEY_IDP_… (upper-case letters, digits and _): over the API no other variable may be sent upstream.', 'secret_env'],
    ["the SP signing key (a PKCS#8 PEM)'s environment variable must be a variable's name (letters, digits and _), not a value", 'sp_signing_key_env'],
    ['The domain contoso.com belongs to the identity provider "other" already.', 'domains'],
    ['An identity provider "contoso" exists already.', 'id'],
    ['groups_create needs groups_match name: a group created from an external id (an object id) would be named by it', 'groups_match'],
    ['give the IdP metadata as exactly one of a URL or a file', 'metadata_url'],
    ['the mapping has no attribute nickname', undefined],
  ])('shows "%s" beside %s', (message, field) => {
    expect(problemOfRefusal(new AdminApiRefusal(400, 'invalid_request', message), PROVIDER_FIELDS)).toEqual({ field, message });
  });
});
