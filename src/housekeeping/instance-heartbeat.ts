import { Inject, Injectable, Logger, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import { Clock } from '../common/clock.js';
import { housekeepingConfig, type HousekeepingConfig } from '../config/housekeeping.config.js';
import { InstanceStore } from '../instances/instance.store.js';
import { ThisInstance } from '../instances/this-instance.js';

/**
 * Records this server instance in the instances table (issue 48, the dashboard's "instances
 * seen"): once as the application starts, then every INSTANCE_HEARTBEAT_SECONDS; on a graceful
 * shutdown it removes the row, so that what is listed and not live is an instance that stopped
 * without saying so. The server's only (HousekeepingModule): a CLI call is not an instance.
 *
 * A heartbeat is one statement. One that fails is a warning and the next one tries again: the
 * dashboard may show the instance as not responding meanwhile, but nothing else depends on it.
 * Beats never overlap, the timer is unref'd (it never keeps the process alive), and shutdown waits
 * for a beat in progress before the removal, so that no late beat writes the row back.
 */
@Injectable()
export class InstanceHeartbeat implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(InstanceHeartbeat.name);
  private timer?: NodeJS.Timeout;
  private beating?: Promise<void>;
  private stopping = false;

  constructor(
    private readonly store: InstanceStore,
    private readonly instance: ThisInstance,
    @Inject(housekeepingConfig.KEY) private readonly config: HousekeepingConfig,
    private readonly clock: Clock,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const intervalMs = this.config.heartbeatSeconds * 1000;
    if (intervalMs === 0) return;
    this.timer = setInterval(() => void this.beat(), intervalMs).unref();
    await this.beat();
  }

  async beforeApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    if (this.stopping || this.config.heartbeatSeconds === 0) return;
    this.stopping = true;
    await this.beating;
    await this.store.remove(this.instance.id).catch((error: unknown) => this.warn('Could not remove this instance from the instances table', error));
  }

  /** One heartbeat, unless one is still going (its promise is returned) or the instance is stopping. */
  beat(): Promise<void> {
    if (this.stopping) return Promise.resolve();
    const { id, hostname, pid, version, node, startedAt } = this.instance;
    this.beating ??= this.store
      .record({ id, hostname, pid, version, node, startedAt, heartbeatSeconds: this.config.heartbeatSeconds, lastSeenAt: this.clock.now() })
      .catch((error: unknown) => this.warn('Heartbeat failed, will retry at the next interval', error))
      .finally(() => {
        this.beating = undefined;
      });
    return this.beating;
  }

  private warn(message: string, error: unknown): void {
    this.logger.warn(`${message}: ${error instanceof Error ? error.message : String(error)}`);
  }
}
