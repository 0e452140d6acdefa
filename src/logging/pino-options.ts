import type { IncomingMessage, ServerResponse } from 'node:http';
import { stdTimeFunctions, type LevelWithSilent } from 'pino';
import type { Options } from 'pino-http';
import { REDACTED_PATHS, redactUrl } from './log-redaction.js';

/** Probes are polled every few seconds by every load balancer: logging each would drown the rest. */
export const QUIET_PATHS = new Set(['/health/live', '/health/ready']);

/** A request as pino's standard serializer maps it, before ours picks the fields to keep. */
interface MappedRequest {
  id?: unknown;
  method?: string;
  url?: string;
  remoteAddress?: string;
  raw?: IncomingMessage & { clientIp?: string };
}

/**
 * The root logger's options (nestjs-pino builds it through pino-http). Request lines are written
 * by request-logging.ts: id, method, URL without secrets, client address, status and time. No headers and no bodies are logged at all, so the
 * Authorization header, cookies, forms with passwords and token responses never reach a line.
 */
export function pinoHttpOptions(level: LevelWithSilent): Options {
  return {
    level,
    timestamp: stdTimeFunctions.isoTime,
    base: { service: 'latchkey' },
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    serializers: {
      req: (request: MappedRequest) => ({
        id: request.id,
        method: request.method,
        url: request.url === undefined ? undefined : redactUrl(request.url),
        // The client's address as Fastify sees it (X-Forwarded-For only from a TRUST_PROXY balancer).
        remoteAddress: request.raw?.clientIp ?? request.remoteAddress,
      }),
      res: (response: ServerResponse) => ({ statusCode: response.statusCode }),
    },
  };
}
