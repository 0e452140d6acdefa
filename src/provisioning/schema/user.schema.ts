import { SCHEMA } from '../scim.constants.js';
import { attribute, complex, multiValued, text, type SchemaDefinition } from './attribute.js';

/** RFC 7643 §4.1 and §8.7.1: the User schema, every attribute this server keeps. */
export const USER_SCHEMA: SchemaDefinition = {
  id: SCHEMA.user,
  name: 'User',
  description: 'User Account',
  attributes: [
    text('userName', 'Unique identifier for the User, used to sign in: 1 to 64 letters, digits and . _ @ - (not first).', { required: true, uniqueness: 'server' }),
    complex('name', "The components of the user's real name.", [
      text('formatted', 'The full name, including all middle names, titles, and suffixes as appropriate.'),
      text('familyName', 'The family name of the User.'),
      text('givenName', 'The given name of the User.'),
      text('middleName', 'The middle name(s) of the User.'),
      text('honorificPrefix', 'The honorific prefix(es) of the User.'),
      text('honorificSuffix', 'The honorific suffix(es) of the User.'),
    ]),
    text('displayName', 'The name of the User, suitable for display to end-users.'),
    text('nickName', 'The casual way to address the user in real life.'),
    attribute('profileUrl', 'reference', "A fully qualified URL pointing to a page representing the User's online profile.", { referenceTypes: ['external'] }),
    text('title', "The user's title, such as \"Vice President\"."),
    text('userType', 'Used to identify the relationship between the organization and the user.'),
    text('preferredLanguage', "The User's preferred written or spoken language (RFC 7231 Accept-Language)."),
    text('locale', "The User's default location for localizing items (BCP 47)."),
    text('timezone', "The User's time zone in the 'Olson' time zone database format."),
    attribute('active', 'boolean', "The User's administrative status: false refuses every sign-in and ends their sessions."),
    text('password', 'The password for signing in; never returned.', { mutability: 'writeOnly', returned: 'never', caseExact: true }),
    multiValued('emails', 'Email addresses for the user; the primary one is the address released to applications.', ['work', 'home', 'other']),
    multiValued('phoneNumbers', 'Phone numbers for the User.', ['work', 'home', 'mobile', 'fax', 'pager', 'other']),
    multiValued('ims', 'Instant messaging addresses for the User.', ['aim', 'gtalk', 'icq', 'xmpp', 'msn', 'skype', 'qq', 'yahoo']),
    multiValued('photos', 'URLs of photos of the User.', ['photo', 'thumbnail']),
    complex(
      'addresses',
      'A physical mailing address for this User.',
      [
        text('formatted', 'The full mailing address, formatted for display or use with a mailing label.'),
        text('streetAddress', 'The full street address component.'),
        text('locality', 'The city or locality component.'),
        text('region', 'The state or region component.'),
        text('postalCode', 'The zip code or postal code component.'),
        text('country', 'The country name component.'),
        text('type', 'A label indicating the function of the address.', { canonicalValues: ['work', 'home', 'other'] }),
        attribute('primary', 'boolean', 'Whether this is the primary address.'),
      ],
      { multiValued: true },
    ),
    complex(
      'groups',
      'The groups the user belongs to directly; changed through the Group resources.',
      [
        text('value', 'The identifier of the Group.', { mutability: 'readOnly' }),
        attribute('$ref', 'reference', 'The URI of the Group.', { mutability: 'readOnly', referenceTypes: ['Group'] }),
        text('display', 'The displayName of the Group.', { mutability: 'readOnly' }),
        text('type', 'direct or indirect membership.', { mutability: 'readOnly', canonicalValues: ['direct', 'indirect'] }),
      ],
      { multiValued: true, mutability: 'readOnly' },
    ),
    multiValued('entitlements', 'A list of entitlements for the User.', []),
    multiValued('roles', 'A list of roles for the User.', []),
    multiValued('x509Certificates', 'A list of certificates issued to the User.', [], [], { }),
  ],
};

/** RFC 7643 §4.3: the enterprise user extension. */
export const ENTERPRISE_USER_SCHEMA: SchemaDefinition = {
  id: SCHEMA.enterpriseUser,
  name: 'EnterpriseUser',
  description: 'Enterprise User',
  attributes: [
    text('employeeNumber', 'Numeric or alphanumeric identifier assigned to a person by the organization.'),
    text('costCenter', 'Identifies the name of a cost center.'),
    text('organization', 'Identifies the name of an organization.'),
    text('division', 'Identifies the name of a division.'),
    text('department', 'Identifies the name of a department.'),
    complex('manager', "The User's manager.", [
      text('value', 'The id of the SCIM resource representing the manager.'),
      attribute('$ref', 'reference', 'The URI of the manager.', { referenceTypes: ['User'] }),
      text('displayName', 'The displayName of the manager.', { mutability: 'readOnly' }),
    ]),
  ],
};
