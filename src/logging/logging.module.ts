import { Module, RequestMethod, type DynamicModule } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import type { DestinationStream, LevelWithSilent } from 'pino';
import { appConfig, type AppConfig } from '../config/app.config.js';
import { pinoHttpOptions } from './pino-options.js';

export interface LoggingOptions {
  /** Overrides LOG_LEVEL (tests keep their output quiet). */
  level?: LevelWithSilent;
  /** Where the JSON lines go instead of standard output (tests read them back). */
  destination?: DestinationStream;
}

/** Structured JSON logs through pino (nestjs-pino): the Nest logger and one line per request. */
@Module({})
export class LoggingModule {
  static forRoot(options: LoggingOptions = {}): DynamicModule {
    return {
      module: LoggingModule,
      imports: [
        LoggerModule.forRootAsync({
          inject: [appConfig.KEY],
          useFactory: (app: AppConfig) => {
            const http = pinoHttpOptions(options.level ?? (app.logLevel as LevelWithSilent));
            // nestjs-pino's default route pattern ('{/*splat}') matches nothing on Nest 12's Fastify
            // adapter (checked: no request line at all); '{*splat}' matches every path.
            return { pinoHttp: options.destination ? [http, options.destination] : http, forRoutes: [{ path: '{*splat}', method: RequestMethod.ALL }] };
          },
        }),
      ],
    };
  }
}
