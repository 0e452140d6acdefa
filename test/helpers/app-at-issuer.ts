import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { AddressInfo } from 'node:net';
import { createApp } from '../../src/app.setup.js';
import { freePort } from './free-port.js';
import { createTestDatabase } from './test-database.js';

export { freePort } from './free-port.js';

/**
 * The real app (same createApp() as main.ts) listening on the port its ISSUER names: client
 * libraries check that the metadata's issuer is the URL they discovered it from.
 */
export async function startAtIssuer(env: Record<string, string> = {}): Promise<{ nest: NestFastifyApplication; issuer: URL }> {
  const port = await freePort();
  Object.assign(process.env, env, { ISSUER: `http://127.0.0.1:${port}` });
  await createTestDatabase();
  const nest = await createApp({ level: 'error' });
  try {
    await nest.listen(port, '127.0.0.1');
  } catch (error) {
    // Closed here, or its database connections and timers outlive the suite and fail the next one.
    await nest.close();
    throw error;
  }
  await nest.getHttpAdapter().getInstance().ready();
  return { nest, issuer: new URL(process.env.ISSUER!) };
}

/**
 * One more instance of the real app on the database and issuer the test already uses, on a port of
 * its own, as a load balancer would have beside the first: what the multi-instance tests start.
 */
export async function startAnotherInstance(): Promise<{ nest: NestFastifyApplication; baseUrl: string }> {
  const nest = await createApp({ level: 'error' });
  await nest.listen(0, '127.0.0.1');
  await nest.getHttpAdapter().getInstance().ready();
  const { port } = nest.getHttpServer().address() as AddressInfo;
  return { nest, baseUrl: `http://127.0.0.1:${port}` };
}
