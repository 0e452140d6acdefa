import { Inject, Injectable, Logger, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import { housekeepingConfig, type HousekeepingConfig } from '../config/housekeeping.config.js';
import { PurgeService } from './purge.service.js';

/**
 * Runs the purge every PURGE_INTERVAL_SECONDS on this instance. The first run waits a random part
 * of the interval, so that instances started together (a deployment) do not all purge at once.
 * Runs never overlap within the process: a tick that finds one still going is skipped. Timers are
 * unref'd, so they never keep the process alive, and stop on shutdown, where a run in progress
 * ends after its current batch, before the database connection closes.
 */
@Injectable()
export class PurgeScheduler implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(PurgeScheduler.name);
  private readonly stop = new AbortController();
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;

  constructor(
    private readonly purge: PurgeService,
    @Inject(housekeepingConfig.KEY) private readonly config: HousekeepingConfig,
  ) {}

  onApplicationBootstrap(): void {
    const intervalMs = this.config.intervalSeconds * 1000;
    if (intervalMs === 0) return;
    this.timer = setTimeout(() => {
      this.tick();
      this.timer = setInterval(() => this.tick(), intervalMs).unref();
    }, Math.floor(Math.random() * intervalMs)).unref();
  }

  async beforeApplicationShutdown(): Promise<void> {
    // clearTimeout clears either kind of Node timer.
    clearTimeout(this.timer);
    this.stop.abort();
    await this.running;
  }

  /** One scheduled run, unless the previous one is still going. */
  tick(): void {
    if (this.running || this.stop.signal.aborted) return;
    this.running = this.purge
      .purge({ signal: this.stop.signal })
      .then(
        (result) => {
          if (result.codes + result.tokens > 0) this.logger.log(`Purged ${result.codes} expired codes and ${result.tokens} expired tokens`);
        },
        (error: unknown) => this.logger.warn(`Purge failed, will retry at the next interval: ${error instanceof Error ? error.message : String(error)}`),
      )
      .finally(() => {
        this.running = undefined;
      });
  }
}
