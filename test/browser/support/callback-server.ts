import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A relying party's redirect endpoint for the browser tests: hands each callback URL to whoever
 * waits for it (`next`), and shows the browser a small, well-formed page.
 */
export async function callbackServer(): Promise<{ server: Server; redirectUri: string; next: () => Promise<URL> }> {
  const waiting: ((url: URL) => void)[] = [];
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', redirectUri);
    if (url.pathname !== '/callback') return void response.writeHead(404).end();
    waiting.splice(0).forEach((resolve) => resolve(url));
    response
      .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
      .end('<!doctype html><html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>Expense reports</title></head><body><main><h1>Back at Expense reports</h1></main></body></html>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const redirectUri = `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`;
  return { server, redirectUri, next: () => new Promise((resolve) => waiting.push(resolve)) };
}
