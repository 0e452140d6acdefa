import { SCHEMA } from '../scim.constants.js';
import { attribute, complex, text, type SchemaDefinition } from './attribute.js';

/** RFC 7643 §4.2 and §8.7.1: the Group schema. */
export const GROUP_SCHEMA: SchemaDefinition = {
  id: SCHEMA.group,
  name: 'Group',
  description: 'Group',
  attributes: [
    text('displayName', 'A human-readable name for the Group.', { required: true, uniqueness: 'server' }),
    complex(
      'members',
      'A list of members of the Group: people and groups.',
      [
        text('value', 'Identifier of the member of this Group.', { mutability: 'immutable' }),
        attribute('$ref', 'reference', 'The URI of the member.', { mutability: 'immutable', referenceTypes: ['User', 'Group'] }),
        text('display', 'A human-readable name of the member.', { mutability: 'readOnly' }),
        text('type', 'The type of the member: User or Group.', { mutability: 'immutable', canonicalValues: ['User', 'Group'] }),
      ],
      { multiValued: true },
    ),
  ],
};
