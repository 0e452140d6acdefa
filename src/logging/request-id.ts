import type { FastifyInstance } from 'fastify';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/** What we accept from a caller's X-Request-Id: short, printable, no spaces (it is echoed in a header and logged). */
const ACCEPTABLE_REQUEST_ID = /^[A-Za-z0-9._:@/+=-]{1,128}$/;

/**
 * Fastify's genReqId: the load balancer's or caller's X-Request-Id when it is a sane value, so one
 * id follows a request through nginx and Latchkey; otherwise a new UUID. Fastify also puts it on
 * the raw request, where pino-http (nestjs-pino) picks it up for the request's log line.
 */
export function requestId(request: IncomingMessage): string {
  const incoming = request.headers['x-request-id'];
  return typeof incoming === 'string' && ACCEPTABLE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
}

/** Every response names its request id, so a caller can quote it when reporting a problem. */
export function echoRequestId(fastify: FastifyInstance): void {
  fastify.addHook('onRequest', (request, reply, done) => {
    void reply.header('X-Request-Id', request.id);
    done();
  });
}
