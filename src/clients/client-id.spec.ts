import { newClientId } from './client-information.js';

describe(newClientId.name, () => {
  it('gives 128 random bits as 22 base64url characters that never start with "-" (which a command line reads as an option)', () => {
    const ids = Array.from({ length: 5000 }, () => newClientId());
    for (const id of ids) expect(id).toMatch(/^[A-Za-z0-9][A-Za-z0-9_-]{21}$/);
    expect(new Set(ids).size).toBe(ids.length);
    // Letters and digits all turn up in the first position: the restriction costs under 6 bits of 128.
    expect(new Set(ids.map((id) => id[0])).size).toBeGreaterThan(55);
  });
});
