import type { Socket } from 'node:net';
import { httpErrorCode } from './http-error-code.js';

/** The statuses Node's HTTP parser can refuse a request with before Fastify sees it. */
const STATUS_BY_PARSER_CODE: Record<string, number> = {
  ERR_HTTP_REQUEST_TIMEOUT: 408,
  HPE_HEADER_OVERFLOW: 431,
};
const REASONS: Record<number, string> = { 400: 'Bad Request', 408: 'Request Timeout', 431: 'Request Header Fields Too Large' };

/**
 * Answers a request Node's HTTP parser could not parse (raw non-ASCII bytes in the request line,
 * headers over the size limit, a malformed request line) in the same JSON shape as every other
 * error, `{"error": "<snake_case>", "error_description": …}`, instead of Fastify's default
 * `{"error":"Bad Request"}`. There is no request object yet, so the answer is written to the
 * socket, which is then closed: after a parse error the connection's framing cannot be trusted.
 */
export function clientErrorHandler(error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const status = STATUS_BY_PARSER_CODE[error.code ?? ''] ?? 400;
  const body = JSON.stringify({ error: httpErrorCode(status), error_description: 'The request could not be parsed as HTTP/1.1' });
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${REASONS[status]}\r\nContent-Type: application/json;charset=UTF-8\r\nCache-Control: no-store\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}
