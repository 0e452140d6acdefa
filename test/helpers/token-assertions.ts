import { expect } from '@jest/globals';

/** A token endpoint answer as the e2e tests read it. */
export interface TokenReply {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
}

export const TOKEN_JSON_CONTENT_TYPE = 'application/json;charset=UTF-8';

/** RFC 6749 §5.1: exactly the five members, with the no-store headers. */
export function expectTokenSuccess(reply: TokenReply, expected: { expiresIn: number; scope: string }): void {
  expect(reply.status).toBe(200);
  expect(reply.headers.get('content-type')).toBe(TOKEN_JSON_CONTENT_TYPE);
  expect(reply.headers.get('cache-control')).toBe('no-store');
  expect(reply.headers.get('pragma')).toBe('no-cache');
  expect(reply.body).toEqual({
    access_token: expect.stringMatching(/^lk_at_[A-Za-z0-9_-]{43}$/),
    token_type: 'bearer',
    expires_in: expected.expiresIn,
    refresh_token: expect.stringMatching(/^lk_rt_[A-Za-z0-9_-]{43}$/),
    scope: expected.scope,
  });
}

/** RFC 6749 §5.2: the status, `{ error, error_description }` and nothing else, as JSON. */
export function expectTokenError(reply: TokenReply, status: number, error: string): void {
  // §5.2: error_description holds %x20-21 / %x23-5B / %x5D-7E only.
  expect({ status: reply.status, body: reply.body }).toEqual({ status, body: { error, error_description: expect.stringMatching(/^[\x20\x21\x23-\x5B\x5D-\x7E]+$/) } });
  expect(reply.headers.get('content-type')).toBe(TOKEN_JSON_CONTENT_TYPE);
}
