import { Global, Module, type DynamicModule } from '@nestjs/common';
import { Logger, PinoLogger } from 'nestjs-pino';
import type { DestinationStream, LevelWithSilent } from 'pino';
import { appConfig, type AppConfig } from '../config/app.config.js';
import { logDestination, pinoHttpOptions } from './pino-options.js';

export interface LoggingOptions {
  /** Overrides LOG_LEVEL (tests keep their output quiet). */
  level?: LevelWithSilent;
  /** Where the JSON lines go instead of standard output (tests read them back). */
  destination?: DestinationStream;
}

/**
 * Structured JSON logs through pino: nestjs-pino's Logger serves as Nest's logger, and one line per
 * request is written by a Fastify hook (request-logging.ts). nestjs-pino's LoggerModule is not
 * imported: its per-request middleware (pino-http through @fastify/middie, plus an
 * AsyncLocalStorage context) cost about a quarter of a bearer-protected read (bench/RESULTS.md).
 */
@Global()
@Module({})
export class LoggingModule {
  static forRoot(options: LoggingOptions = {}): DynamicModule {
    return {
      module: LoggingModule,
      providers: [
        {
          provide: PinoLogger,
          inject: [appConfig.KEY],
          useFactory: (app: AppConfig) => {
            const http = pinoHttpOptions(options.level ?? (app.logLevel as LevelWithSilent));
            // The root logger (pino, with the request serializers and redaction of pino-options.ts),
            // writing JSON, or pretty lines for a person at a terminal; a test's destination gets JSON.
            const destination = options.destination ?? logDestination({ format: app.logFormat, production: app.production, isTTY: process.stdout.isTTY === true });
            return new PinoLogger({ pinoHttp: destination ? [http, destination] : http });
          },
        },
        { provide: Logger, inject: [PinoLogger], useFactory: (pino: PinoLogger) => new Logger(pino, {}) },
      ],
      exports: [PinoLogger, Logger],
    };
  }
}
