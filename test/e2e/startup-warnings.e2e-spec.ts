/**
 * Warnings an operator must see at start-up. In a file of its own: Nest's static Logger follows the
 * first application of a process, so the lines of a second one would go to the first one's output.
 */
import { TestApp } from '../helpers/test-app.js';

describe('start-up warnings in production', () => {
  it('says when rate limits are counted per instance because REDIS_URL is unset', async () => {
    const lines: string[] = [];
    delete process.env.REDIS_URL;
    const app = await TestApp.start({ NODE_ENV: 'production', ALLOW_UNSAFE: 'sqlite,http,generated-keys' }, { level: 'warn', destination: { write: (line: string) => void lines.push(line) } });
    await app.stop();
    const parsed = lines.join('').split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(parsed).toContainEqual(expect.objectContaining({ level: 40, context: 'RateLimit', msg: expect.stringContaining('REDIS_URL is not set') }));
  });

});
