import { createServer, type Server, type ServerResponse } from 'node:http';
import type { Registry } from 'prom-client';

/**
 * The Prometheus scrape endpoint on its own listener: GET /metrics in the text exposition format,
 * 404 for anything else. Kept off the public port so that it can stay closed to the public.
 */
export async function startMetricsListener(registry: Registry, host: string, port: number): Promise<Server> {
  const server = createServer((request, response) => {
    const path = (request.url ?? '').split('?')[0];
    if (path !== '/metrics') return answer(response, 404, 'application/json', JSON.stringify({ error: 'not_found', error_description: 'Only /metrics is served here' }));
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.setHeader('Allow', 'GET, HEAD');
      return answer(response, 405, 'application/json', JSON.stringify({ error: 'method_not_allowed', error_description: 'Use GET' }));
    }
    registry.metrics().then(
      (text) => answer(response, 200, registry.contentType, request.method === 'HEAD' ? '' : text),
      () => answer(response, 500, 'application/json', JSON.stringify({ error: 'server_error', error_description: 'Metrics could not be collected' })),
    );
  });
  await new Promise<void>((resolve, reject) => {
    const fail = (error: NodeJS.ErrnoException) => reject(listenFailure(error, host, port));
    server.once('error', fail);
    server.listen(port, host, () => {
      server.off('error', fail);
      resolve();
    });
  });
  return server;
}

/**
 * Why the metrics listener could not open, naming the setting to change: a second instance on the
 * same host finds the default port taken by the first.
 */
function listenFailure(error: NodeJS.ErrnoException, host: string, port: number): Error {
  const where = `${host}:${port}`;
  if (error.code === 'EADDRINUSE') {
    return new Error(`METRICS_PORT: ${where} is already in use (another Latchkey instance on this host?). Give each instance its own METRICS_PORT, or set METRICS_ENABLED=false`);
  }
  if (error.code === 'EACCES') return new Error(`METRICS_PORT: not allowed to listen on ${where}; choose a port above 1023 or run with the right to bind it`);
  if (error.code === 'EADDRNOTAVAIL') return new Error(`METRICS_HOST: ${host} is not an address of this machine`);
  return new Error(`METRICS_PORT: the metrics listener could not open on ${where}: ${error.message}`);
}

/** Closes the listener, dropping idle keep-alive connections of scrapers instead of waiting for them. */
export async function stopMetricsListener(server: Server): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeAllConnections();
  await closed;
}

function answer(response: ServerResponse, status: number, contentType: string, body: string): void {
  response.writeHead(status, { 'Content-Type': contentType, 'Cache-Control': 'no-store' });
  response.end(body);
}
