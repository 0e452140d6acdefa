import type { Logger } from '@nestjs/common';

/** During an outage every request would fail over: say so once a minute, not once a request. */
const WARNING_INTERVAL_MS = 60_000;

/**
 * Redis configured but unreachable: the request is served (availability first) and counted in
 * this instance's memory instead, so each instance still enforces the limit on its own share of
 * the traffic until Redis is back. Readiness reports Redis down meanwhile (health/).
 */
export class RedisFallback {
  private lastWarning = 0;

  constructor(
    private readonly logger: Logger,
    private readonly what: string,
  ) {}

  async run<T>(shared: () => Promise<T>, local: () => Promise<T>): Promise<T> {
    try {
      return await shared();
    } catch (error) {
      if (Date.now() - this.lastWarning >= WARNING_INTERVAL_MS) {
        this.lastWarning = Date.now();
        this.logger.warn(`Redis failed (${error instanceof Error ? error.message : String(error)}); ${this.what} are counted per instance until it answers again`);
      }
      return local();
    }
  }
}
