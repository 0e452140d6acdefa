import { ApiError } from '../http/api-error.js';
import { idempotencyKeyOf } from './idempotency-key.header.js';

describe(idempotencyKeyOf.name, () => {
  it('is undefined without the header', () => {
    expect(idempotencyKeyOf({})).toBeUndefined();
  });

  it.each([
    ['"8e03978e-40d5-43e8-bc93-6894a57f9324"', '8e03978e-40d5-43e8-bc93-6894a57f9324'],
    ['8e03978e-40d5-43e8-bc93-6894a57f9324', '8e03978e-40d5-43e8-bc93-6894a57f9324'],
    ['"with space"', 'with space'],
    ['"escaped \\" and \\\\"', 'escaped " and \\'],
    ['  "padded"  ', 'padded'],
  ])('reads %s as the key %s (RFC 8941 §3.3.3 sf-string, or bare)', (value, key) => {
    expect(idempotencyKeyOf({ 'idempotency-key': value })).toBe(key);
  });

  it.each(['', '""', '"open', 'a b', 'a, b', '"a";p=1', '"bad \\n escape"', `"${'x'.repeat(256)}"`, 'caf\u00e9', ['"a"', '"b"']])('refuses %j with 400', (value) => {
    expect(() => idempotencyKeyOf({ 'idempotency-key': value })).toThrow(expect.objectContaining({ status: 400 }) as ApiError);
  });
});
