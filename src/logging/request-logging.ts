import type { FastifyInstance } from 'fastify';
import type { IncomingMessage } from 'node:http';
import type { BaseLogger } from 'pino';
import { QUIET_PATHS } from './pino-options.js';

/**
 * One JSON line per request (probes excepted), written when the response is sent (Fastify's onResponse hook), in
 * the shape pino-http writes: `req` and `res` through the serializers of pino-options.ts (id,
 * method, URL without secrets, address; status), `responseTime` in ms, and "request completed",
 * or "request errored" at level error for a 5xx. Nothing else about the request is logged.
 */
export function logRequests(fastify: FastifyInstance, logger: BaseLogger): void {
  fastify.addHook('onResponse', (request, reply, done) => {
    if (!QUIET_PATHS.has(request.url.split('?')[0])) {
      const raw = request.raw as IncomingMessage & { id?: string; clientIp?: string };
      raw.id = request.id;
      raw.clientIp = request.ip;
      const failed = reply.statusCode >= 500;
      logger[failed ? 'error' : 'info']({ req: raw, res: reply.raw, responseTime: Math.round(reply.elapsedTime) }, failed ? 'request errored' : 'request completed');
    }
    done();
  });
}
