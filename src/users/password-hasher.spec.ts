import { availableParallelism } from 'node:os';
import { PasswordHasher } from './password-hasher.js';

describe(PasswordHasher.name, () => {
  const hasher = new PasswordHasher();

  it('verifies the right password and refuses a wrong one or an unknown user', async () => {
    const stored = await hasher.hash('correct horse battery staple');
    expect(stored).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expect(await hasher.verify(stored, 'correct horse battery staple')).toBe(true);
    expect(await hasher.verify(stored, 'Correct horse battery staple')).toBe(false);
    expect(await hasher.verify(undefined, 'correct horse battery staple')).toBe(false);
  });

  it('runs at most one hash per core at a time; the others wait and all complete', async () => {
    const stored = await hasher.hash('pw');
    const cores = availableParallelism();
    const attempts = Array.from({ length: cores + 6 }, (_, i) => hasher.verify(stored, i % 2 === 0 ? 'pw' : 'nope'));
    await new Promise((resolve) => setImmediate(resolve));
    expect(PasswordHasher.load()).toEqual({ running: cores, waiting: 6 });
    const results = await Promise.all(attempts);
    expect(results).toEqual(attempts.map((_, i) => i % 2 === 0));
    expect(PasswordHasher.load()).toEqual({ running: 0, waiting: 0 });
  });
});
