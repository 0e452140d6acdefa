import { request, type IncomingHttpHeaders } from 'node:http';

/**
 * One HTTP/1.1 request with exactly these bytes where fetch would refuse or rewrite them: a path
 * holding raw bytes 0x80–0xFF (invalid UTF-8 on the wire, as latin1 characters), repeated headers,
 * odd header values, a raw Buffer body with any Content-Type or none. Each request has its own
 * connection, so a connection the server closes on a parse error cannot spoil the next one.
 */
export interface RawRequest {
  method: string;
  /** Path and query as sent: characters U+0021–U+00FF only (node:http refuses the rest); U+0080–U+00FF go out as single bytes. */
  path: string;
  headers?: Record<string, string | string[]>;
  body?: Buffer;
}

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  /** The body parsed as JSON, or undefined when it is empty or not JSON. */
  json: unknown;
  /**
   * Set when the connection broke after the status line and headers arrived: only ever accepted
   * for HEAD, where Fastify's handler of unparseable requests (431, 400) writes a body anyway.
   */
  brokenAfterHeaders?: string;
}

/** Characters node:http accepts in a request path (it throws ERR_UNESCAPED_CHARACTERS on others). */
export function pathSafe(path: string): string {
  return path.replace(/[^\u0021-\u00ff]/gu, (char) => [...Buffer.from(char)].map((byte) => `%${byte.toString(16).toUpperCase().padStart(2, '0')}`).join(''));
}

export function rawRequest(baseUrl: string, input: RawRequest, timeoutMs = 15_000): Promise<RawResponse> {
  const url = new URL(baseUrl);
  const headers: Record<string, string | string[]> = { ...input.headers };
  if (input.body !== undefined) headers['content-length'] = String(input.body.length);
  return new Promise<RawResponse>((resolve, reject) => {
    let head: Pick<RawResponse, 'status' | 'headers'> | undefined;
    const req = request({ host: url.hostname, port: url.port, method: input.method, path: input.path, headers, agent: false, timeout: timeoutMs }, (res) => {
      head = { status: res.statusCode ?? 0, headers: res.headers };
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: unknown;
        try {
          json = text === '' ? undefined : JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
      });
    });
    req.on('timeout', () => req.destroy(new Error(`No answer to ${input.method} ${input.path.slice(0, 200)} within ${timeoutMs} ms`)));
    req.on('error', (error) => {
      if (head && input.method === 'HEAD') resolve({ ...head, text: '', json: undefined, brokenAfterHeaders: String(error) });
      else reject(error);
    });
    // A server may answer (413, 400) before it has read a large body and close the connection:
    // the answer still arrives; only the write fails, and that is not the server's fault.
    req.on('socket', (socket) => socket.on('error', () => undefined));
    req.end(input.body);
  });
}
