import type { FastifyInstance } from 'fastify';

export interface ConnectionDrain {
  /** From now on every response closes its connection, and connections already idle are closed. */
  begin(): void;
}

/**
 * Lets a shutdown finish once the requests in flight are answered. Fastify's close stops the
 * listener and closes the keep-alive connections that are idle at that moment; a connection busy
 * with a request would, once answered, stay open as keep-alive, and the server would wait for its
 * client to hang up (up to SHUTDOWN_TIMEOUT_SECONDS). So, while draining, each response carries
 * `Connection: close` (RFC 9112 §9.6) and Node closes the connection after sending it.
 */
export function installConnectionDrain(fastify: FastifyInstance): ConnectionDrain {
  let draining = false;
  fastify.addHook('onSend', async (_request, reply, payload) => {
    if (draining) void reply.header('Connection', 'close');
    return payload;
  });
  return {
    begin() {
      draining = true;
      fastify.server.closeIdleConnections();
    },
  };
}
