import { openSuccessor, sealSuccessor, type Successor } from './successor-seal.js';

const SUCCESSOR: Successor = { issued: { accessToken: 'lk_at_new', refreshToken: 'lk_rt_new', expiresIn: 3600, scope: 'notes:read', tokenType: 'bearer' }, request: '[null,null,null]' };

describe('successor seal', () => {
  const token = 'lk_rt_the-rotated-one';

  it('opens with the rotated token on its own row', () => {
    expect(openSuccessor(token, 'row-1', sealSuccessor(token, 'row-1', SUCCESSOR))).toEqual(SUCCESSOR);
  });

  it('holds no token value in the clear', () => {
    const sealed = sealSuccessor(token, 'row-1', SUCCESSOR);
    for (const value of ['lk_at_new', 'lk_rt_new', token]) expect(sealed).not.toContain(value);
  });

  it.each([
    ['another token', 'lk_rt_someone-else', 'row-1'],
    ['another row', token, 'row-2'],
  ])('does not open with %s', (_, presented, row) => {
    expect(openSuccessor(presented, row, sealSuccessor(token, 'row-1', SUCCESSOR))).toBeUndefined();
  });

  it('does not open once tampered with', () => {
    const parts = sealSuccessor(token, 'row-1', SUCCESSOR).split('.');
    parts[3] = Buffer.from(Buffer.from(parts[3], 'base64url').map((byte, i) => (i === 0 ? byte ^ 1 : byte))).toString('base64url');
    expect(openSuccessor(token, 'row-1', parts.join('.'))).toBeUndefined();
  });
});
