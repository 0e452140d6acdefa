import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';
import { chooseLogFormat, logDestination, pinoHttpOptions, type LogFormatChoice } from './pino-options.js';

/** The text a logger with our options writes for `write`, through the destination the choice selects. */
async function linesFor(choice: LogFormatChoice, write: (logger: Logger) => void): Promise<string> {
  const chunks: string[] = [];
  const capture = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  // No pretty destination means pino's own JSON, written here to the capture instead of standard output.
  const destination = logDestination(choice, capture) ?? capture;
  write(pino(pinoHttpOptions('info'), destination));
  // pino-pretty hands its lines on through a stream pipe: let it drain.
  await new Promise((resolve) => setImmediate(resolve));
  return chunks.join('');
}

describe(chooseLogFormat.name, () => {
  it.each<[string, LogFormatChoice, 'json' | 'pretty']>([
    ['JSON when standard output is not a terminal (a pipe, a file, a collector)', { production: false, isTTY: false }, 'json'],
    ['JSON in production, even on a terminal', { production: true, isTTY: true }, 'json'],
    ['pretty on a terminal outside production', { production: false, isTTY: true }, 'pretty'],
    ['LOG_FORMAT=json on a terminal in development', { format: 'json', production: false, isTTY: true }, 'json'],
    ['LOG_FORMAT=pretty through a pipe', { format: 'pretty', production: false, isTTY: false }, 'pretty'],
    ['LOG_FORMAT=pretty in production', { format: 'pretty', production: true, isTTY: false }, 'pretty'],
  ])('%s', (_case, choice, expected) => {
    expect(chooseLogFormat(choice)).toBe(expected);
  });
});

describe(logDestination.name, () => {
  it('leaves JSON to pino (no destination) when not on a terminal, and in production', () => {
    expect(logDestination({ production: false, isTTY: false })).toBeUndefined();
    expect(logDestination({ production: true, isTTY: true })).toBeUndefined();
    expect(logDestination({ format: 'json', production: false, isTTY: true })).toBeUndefined();
  });

  it('writes JSON lines, unchanged, when not on a terminal', async () => {
    const text = await linesFor({ production: false, isTTY: false }, (logger) => logger.info({ context: 'Main' }, 'started'));
    expect(JSON.parse(text)).toMatchObject({ level: 30, service: 'latchkey', context: 'Main', msg: 'started' });
  });

  it('writes one readable line per event on a terminal in development', async () => {
    const text = await linesFor({ production: false, isTTY: true }, (logger) => logger.info({ context: 'Main' }, 'Latchkey is listening'));
    const plain = stripColour(text);
    expect(plain).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: \[Main\] Latchkey is listening\n$/);
    expect(text).not.toBe(plain); // coloured
    expect(() => JSON.parse(text)).toThrow();
  });

  it('redacts the user code of a device verification link (RFC 8628 §3.3.1) in the request line', async () => {
    const req = { id: 'req-8', method: 'GET', url: '/device?user_code=BCDF-GHJK', headers: {}, socket: {} };
    const text = await linesFor({ format: 'pretty', production: false, isTTY: false }, (logger) => logger.info({ req, res: { statusCode: 200 }, responseTime: 2 }, 'request completed'));
    expect(text).toContain('GET /device?user_code=[redacted] 200 2 ms (req-8)');
    expect(text).not.toContain('BCDF');
  });

  it('shows a request line as method, URL, status and time, with secrets in the URL and headers still redacted', async () => {
    const req = { id: 'req-7', method: 'GET', url: '/authorize?client_id=c1&code=lk_ac_SECRET&state=s', headers: { authorization: 'Bearer lk_at_SECRET', cookie: 'session=SECRET' }, socket: {} };
    const text = await linesFor({ format: 'pretty', production: false, isTTY: false }, (logger) => {
      logger.info({ req, res: { statusCode: 302 }, responseTime: 4 }, 'request completed');
      // Anything logging headers whole: pino's redaction runs before pino-pretty sees the line.
      logger.info({ headers: req.headers, body: { password: 'hunter2', client_secret: 'SECRET' } }, 'a careless line');
    });
    expect(text).toContain('GET /authorize?client_id=c1&code=[redacted]&state=s 302 4 ms (req-7)');
    expect(text).not.toMatch(/SECRET|hunter2/);
    expect(text.match(/\[redacted\]/g)?.length).toBeGreaterThanOrEqual(4);
    // Not coloured: LOG_FORMAT=pretty into a pipe or a file stays plain text.
    expect(text).toBe(stripColour(text));
  });
});

function stripColour(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/\u001b\[[0-9;]*m/g, '');
}
