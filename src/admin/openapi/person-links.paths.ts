import { ADMIN_ERRORS, adminError, adminJson } from './admin-schema.js';
import { change, id, INVALID, NOT_FOUND, READ } from './people.paths.js';

const upstreamLink = {
  type: 'object',
  properties: {
    idp: { type: 'string', description: 'The identity provider id' },
    subject: { type: 'string', description: "The person's subject there: its sub, or SAML NameID" },
    origin: { type: 'string', enum: ['created', 'linked', 'admin'], description: 'A just-in-time account, the person\'s own step, or an administrator' },
    created_at: { type: 'string', format: 'date-time' },
    last_sign_in_at: { type: ['string', 'null'], format: 'date-time' },
  },
};
const linkParameters = [
  { name: 'idp', in: 'path', required: true, schema: { type: 'string' } },
  { name: 'subject', in: 'path', required: true, description: 'URL-encoded (a subject may hold "/" or "|")', schema: { type: 'string' } },
];

/** A person's links to upstream identity providers and the address verification (src/admin/people/person-links.controller.ts). */
export const PERSON_LINK_PATHS: Record<string, object> = {
  '/people/{id}/upstream-links': {
    get: {
      summary: "The person's links to upstream identity providers, all of them (not paged): `{ items }`",
      security: READ,
      parameters: [id],
      responses: { '200': { description: 'Every link', content: adminJson({ type: 'object', required: ['items'], properties: { items: { type: 'array', items: upstreamLink } } }) }, ...NOT_FOUND, ...ADMIN_ERRORS },
    },
    post: change(
      'Link an upstream identity (users:link): whoever holds it signs in as the person; of an administrator, only an owner may',
      {
        '201': { description: 'Linked (Location names it)', content: adminJson(upstreamLink) },
        '200': { description: 'The person had this link already: nothing changed', content: adminJson(upstreamLink) },
        ...INVALID,
        '404': adminError('No such person or identity provider (not_found)'),
        '409': adminError('That upstream identity is linked to another person (conflict)'),
      },
      { requestBody: { required: true, content: adminJson({ type: 'object', required: ['identity_provider', 'subject'], properties: { identity_provider: { type: 'string' }, subject: { type: 'string', maxLength: 255 } } }) } },
    ),
  },
  '/people/{id}/upstream-links/{idp}/{subject}': {
    delete: change('Remove a link (users:unlink)', { '204': { description: 'Unlinked' }, '404': adminError('No such person, or the person has no such link (not_found)') }, { parameters: linkParameters }),
  },
  '/people/{id}/email-verification': {
    post: change('Email the person a link confirming their current address (users:verify-email); the link is never returned', {
      '202': { description: '{ email, expires_at }: the message is sent' },
      '409': adminError('The person has no address, or email is not set up (conflict)'),
    }),
  },
};
