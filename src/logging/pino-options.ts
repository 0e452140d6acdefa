import type { IncomingMessage, ServerResponse } from 'node:http';
import { stdTimeFunctions, type LevelWithSilent } from 'pino';
import type { Options } from 'pino-http';
import { REDACTED_PATHS, redactUrl } from './log-redaction.js';

/** Probes are polled every few seconds by every load balancer: logging each would drown the rest. */
const QUIET_PATHS = new Set(['/health/live', '/health/ready']);

type RequestWithId = IncomingMessage & { id?: unknown; originalUrl?: string };

/**
 * One JSON line per request (pino-http through nestjs-pino): id, method, URL without secrets,
 * client address, status and time. No headers and no bodies are logged at all, so the
 * Authorization header, cookies, forms with passwords and token responses never reach a line.
 */
export function pinoHttpOptions(level: LevelWithSilent): Options {
  return {
    level,
    timestamp: stdTimeFunctions.isoTime,
    base: { service: 'latchkey' },
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    // Middleware sees a mount-relative req.url; originalUrl is the path the client asked for.
    autoLogging: { ignore: (request: RequestWithId) => QUIET_PATHS.has((request.originalUrl ?? request.url ?? '').split('?')[0]) },
    // A 4xx is the client's business; only a 5xx, or a failure, is the operator's.
    customLogLevel: (_request, response, error) => (error || response.statusCode >= 500 ? 'error' : 'info'),
    serializers: {
      req: (request: RequestWithId) => ({
        id: request.id,
        method: request.method,
        url: redactUrl(request.originalUrl ?? request.url),
        remoteAddress: request.socket?.remoteAddress,
      }),
      res: (response: ServerResponse) => ({ statusCode: response.statusCode }),
    },
  };
}
