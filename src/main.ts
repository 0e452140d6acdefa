// First: on a Node line Latchkey does not run on, one clear line and exit, before the SQLite driver loads.
import './runtime/node-line.js';
// Then: V8 heap settings must be in place before the application's modules allocate anything.
import './runtime/v8-heap-tuning.js';
import 'reflect-metadata';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Logger } from 'nestjs-pino';
import { destination, pino, stdTimeFunctions } from 'pino';
import { createApp } from './app.setup.js';
import { appConfig, startupLogFormat, type AppConfig } from './config/app.config.js';
import { installConnectionDrain, type ConnectionDrain } from './http/connection-drain.js';
import { logDestination } from './logging/pino-options.js';

async function main(): Promise<void> {
  const app = await createApp();
  const config = app.get<AppConfig>(appConfig.KEY);
  const logger = app.get(Logger);
  const drain = installConnectionDrain(app.getHttpAdapter().getInstance());
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => void shutDown(app, drain, logger, signal, config.shutdownTimeoutMs));
  }
  await app.listen(config.port, config.host).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'EADDRINUSE') throw new Error(`PORT: ${config.host}:${config.port} is already in use; choose another PORT for this instance`);
    throw error;
  });
  logger.log(`Latchkey is listening on ${config.tls ? 'https' : 'http'}://${config.host}:${config.port} (issuer ${config.issuer})`, 'Main');
}

/**
 * Graceful shutdown, as an orchestrator or load balancer expects on SIGTERM: stop accepting
 * connections, let in-flight requests finish (Fastify's close; idle keep-alive connections are
 * closed, a request arriving on a busy one gets 503), then close the database pool and the other
 * connections (Nest's shutdown hooks). If that takes longer than SHUTDOWN_TIMEOUT_SECONDS, exit anyway.
 */
async function shutDown(app: NestFastifyApplication, drain: ConnectionDrain, logger: Logger, signal: string, timeoutMs: number): Promise<void> {
  logger.log(`${signal} received: finishing in-flight requests (at most ${timeoutMs / 1000} s)`, 'Main');
  const deadline = setTimeout(() => {
    logger.error(`Shutdown took longer than ${timeoutMs / 1000} s; exiting with requests still open`, undefined, 'Main');
    process.exit(1);
  }, timeoutMs);
  deadline.unref();
  drain.begin();
  try {
    await app.close();
    logger.log('Stopped', 'Main');
    process.exit(0);
  } catch (error) {
    logger.error(`Shutdown failed: ${error instanceof Error ? error.message : String(error)}`, undefined, 'Main');
    process.exit(1);
  }
}

/**
 * A start-up failure (a wrong setting, a port in use, a database that cannot be reached) as one
 * line in the format of every other log line (JSON, so that log collectors see it, or pretty at a
 * terminal), with the message that names the setting to change. No stack trace: the message is the explanation.
 */
main().catch((error: unknown) => {
  const message = error instanceof Error ? error.message : String(error);
  // Written synchronously: process.exit() below would drop a line still in an asynchronous buffer.
  const out = logDestination({ ...startupLogFormat(), isTTY: process.stdout.isTTY === true }) ?? destination({ dest: 1, sync: true });
  pino({ base: { service: 'latchkey' }, timestamp: stdTimeFunctions.isoTime }, out).fatal({ context: 'Main' }, `Latchkey could not start: ${message}`);
  process.exit(1);
});
