import { createRequire } from 'node:module';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { stdTimeFunctions, type DestinationStream, type LevelWithSilent } from 'pino';
import type { Options } from 'pino-http';
import type { PrettyOptions } from 'pino-pretty';
import type { LogFormat } from '../config/app.config.js';
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

export interface LogFormatChoice {
  /** LOG_FORMAT, when set: wins over the guess below. */
  format?: LogFormat;
  production: boolean;
  /** Whether standard output is a terminal (a person reading), rather than a pipe or a file (a collector). */
  isTTY: boolean;
}

/** JSON lines for collectors and production; colour, one line per event, for a person at a terminal. */
export function chooseLogFormat({ format, production, isTTY }: LogFormatChoice): LogFormat {
  return format ?? (isTTY && !production ? 'pretty' : 'json');
}

/** Fields a request line shows in its message (below), and the constant `service`: left out of the pretty line. */
const PRETTY_IGNORED = 'pid,hostname,service,context,req,res,responseTime';

/**
 * Where pretty lines go: pino-pretty as an in-process stream behind the logger, so the logger's
 * serializers and redaction (REDACTED_PATHS, redactUrl) have run before a line is formatted,
 * exactly as for JSON. Undefined (JSON on standard output) when the format is JSON or pino-pretty
 * is not installed: it is a dev dependency, absent from production installs and the image.
 * Written synchronously, as pino's own standard output is: a line logged just before
 * process.exit() (shutdown, a start-up failure) is not lost. `to`: standard output, or a test's stream.
 */
export function logDestination(choice: LogFormatChoice, to: number | NodeJS.WritableStream = 1): DestinationStream | undefined {
  if (chooseLogFormat(choice) !== 'pretty') return undefined;
  let pretty: (options: PrettyOptions) => DestinationStream;
  try {
    // createRequire, not import(): the logger is built synchronously, and a missing module must not throw.
    pretty = createRequire(import.meta.url)('pino-pretty') as typeof pretty;
  } catch {
    return undefined;
  }
  return pretty({
    colorize: choice.isTTY,
    translateTime: 'SYS:HH:MM:ss.l',
    singleLine: true,
    ignore: PRETTY_IGNORED,
    sync: true,
    destination: to,
    messageFormat: (log, messageKey, _level, { colors }) => {
      const context = typeof log.context === 'string' ? colors.yellow(`[${log.context}] `) : '';
      const req = log.req as { id?: unknown; method?: string; url?: string } | undefined;
      const res = log.res as { statusCode?: number } | undefined;
      if (req === undefined) return `${context}${String(log[messageKey] ?? '')}`;
      // A request line (request-logging.ts): what a person scans for, instead of nested JSON.
      const status = res?.statusCode ?? 0;
      const statusColour = status >= 500 ? colors.red : status >= 400 ? colors.yellow : colors.green;
      return `${context}${req.method ?? ''} ${req.url ?? ''} ${statusColour(String(status || '-'))} ${String(log.responseTime ?? '-')} ms ${colors.gray(`(${String(req.id ?? '')})`)}`;
    },
  });
}
