import { ApiError } from '../../http/api-error.js';
import { decodeCursor, encodeCursor, type Cursor } from './cursor.js';

/** The keyset cursor of list pages (docs/reference/data-api.md, "Paging"): opaque to clients, checked when it comes back. */
describe('cursor codec', () => {
  const id = '0190a5b2-7c3d-7e4f-8a9b-0c1d2e3f4a5b';

  it.each<[string, unknown]>([
    ['a string', 'Buy milk'],
    ['a number', 42.5],
    ['a boolean', false],
    ['null', null],
  ])('round-trips a sort value that is %s', (_, value) => {
    const cursor: Cursor = { sort: '-createdAt', value, id };
    const encoded = encodeCursor(cursor);
    expect(encoded).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeCursor(encoded, '-createdAt')).toEqual(cursor);
  });

  function rejection(value: string, sort = 'title'): ApiError {
    try {
      decodeCursor(value, sort);
    } catch (error) {
      return error as ApiError;
    }
    throw new Error(`decodeCursor accepted ${value}`);
  }
  const raw = (json: unknown) => Buffer.from(JSON.stringify(json)).toString('base64url');

  it.each([
    ['not base64 JSON', '%%%'],
    ['JSON that is not an array', raw({ sort: 'title', value: 'a', id })],
    ['an array of the wrong length', raw(['title', 'a'])],
    ['an id that is not a UUID', raw(['title', 'a', 'x'])],
    ['an object as sort value', raw(['title', { $gt: 1 }, id])],
    ['a NUL in the sort value', raw(['title', 'a\u0000b', id])],
  ])('refuses %s with 400', (_, value) => {
    const error = rejection(value);
    expect(error).toBeInstanceOf(ApiError);
    expect(error.status).toBe(400);
    expect(error.description).toBe('The cursor is not one this server issued');
  });

  it('refuses a cursor of another sort order, saying so', () => {
    const error = rejection(encodeCursor({ sort: 'title', value: 'a', id }), '-title');
    expect(error.status).toBe(400);
    expect(error.description).toMatch(/another sort order/);
  });
});
