import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AttributeKind } from './collection.js';
import { CollectionsFileError, loadCollections } from './collections-loader.js';

describe(loadCollections.name, () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'latchkey-collections-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  function load(content: unknown): ReturnType<typeof loadCollections> {
    const file = join(dir, `c${Math.random().toString(36).slice(2)}.json`);
    writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content));
    return loadCollections(file);
  }

  const notes = (extra: Record<string, unknown> = {}, properties: Record<string, unknown> = {}) => ({
    collections: {
      notes: {
        schema: { type: 'object', properties: { title: { type: 'string' }, done: { type: 'boolean' }, tags: { type: 'array', items: { type: 'string' } }, meta: { type: 'object' }, ...properties }, required: ['title'] },
        ...extra,
      },
    },
  });

  it('loads the shipped file: notes and photos, with their scopes and attribute kinds', () => {
    const collections = loadCollections(join(process.cwd(), 'config', 'collections.json'));
    expect([...collections.keys()]).toEqual(['notes', 'photos']);
    const notesCollection = collections.get('notes')!;
    expect(notesCollection.readScope).toBe('notes:read');
    expect(notesCollection.writeScope).toBe('notes:write');
    expect(notesCollection.attributes.get('tags')!.kind).toBe(AttributeKind.StringArray);
    expect(notesCollection.attributes.get('done')).toMatchObject({ kind: AttributeKind.Boolean, filterable: true, sortable: true, writable: true });
    expect(notesCollection.schema.additionalProperties).toBe(false);
  });

  it('closes every item schema and validates with formats', () => {
    const photos = loadCollections(join(process.cwd(), 'config', 'collections.json')).get('photos')!;
    expect(photos.validate({ title: 'x', url: 'https://example.com/a.jpg', takenAt: '2026-01-02T03:04:05Z' })).toBe(true);
    expect(photos.validate({ title: 'x', colour: 'red' })).toBe(false);
    expect(photos.validate({ title: 'x', url: 'not a url' })).toBe(false);
    expect(photos.validate({ title: 'x', takenAt: 'yesterday' })).toBe(false);
  });

  it('defaults: every attribute writable, none filterable or sortable', () => {
    const attribute = load(notes()).get('notes')!.attributes.get('title')!;
    expect(attribute).toMatchObject({ writable: true, filterable: false, sortable: false });
  });

  it.each([
    ['not JSON', '{"collections": ', /Invalid collections file .*JSON/s],
    ['no collections key', { notes: {} }, /missing required attribute "collections"/],
    ['an empty collection list', { collections: {} }, /must NOT have fewer than 1 properties/],
    ['a singular or upper-case name', { collections: { Note: notes().collections.notes } }, /property name must be valid|must match pattern/],
    ['a schema that is not an object schema', { collections: { notes: { schema: { type: 'string', properties: { a: {} } } } } }, /must be equal to constant/],
    ['an attribute name unsafe in SQL', notes({}, { "x'y": { type: 'string' } }), /must match pattern/],
    ['a server-managed field in the schema', notes({}, { id: { type: 'string' } }), /"id" is managed by the server/],
    ['a filterable attribute the schema lacks', notes({ filterable: ['colour'] }), /filterable names "colour"/],
    ['an object attribute as filter', notes({ filterable: ['meta'] }), /"meta" cannot be filterable/],
    ['an array attribute as sort', notes({ sortable: ['tags'] }), /"tags" cannot be sortable/],
    ['a required attribute that is not writable', notes({ writable: ['done'] }), /"title" is required but not writable/],
    ['a misspelt schema keyword', notes({}, { body: { type: 'string', maxLenght: 3 } }), /schema does not compile: .*maxLenght/],
    ['an unknown key on a collection', notes({ searchable: ['title'] }), /\/collections\/notes: unknown attribute "searchable"/],
  ])('refuses %s, naming the problem', (_case, content, message) => {
    expect(() => load(content)).toThrow(CollectionsFileError);
    expect(() => load(content)).toThrow(message);
  });

  it('names the file when it cannot be read', () => {
    expect(() => loadCollections(join(dir, 'missing.json'))).toThrow(/Invalid collections file .*missing\.json:\n {2}- ENOENT/);
  });
});
