import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { ClientsService } from '../clients/clients.service.js';
import { Clock } from '../common/clock.js';
import { logoutConfig, type LogoutConfig } from '../config/logout.config.js';
import { outboundConfig, type OutboundConfig } from '../config/outbound.config.js';
import { postForm } from '../outbound/outbound-http.js';
import type { LogoutDelivery } from './logout-delivery.entity.js';
import { LogoutDeliveryStore } from './logout-delivery.store.js';
import { LogoutTokenIssuer } from './logout-token.issuer.js';

/**
 * How long a claimed notification is this instance's before another may retry it: a minute, and
 * always well beyond the time one send may take (BACKCHANNEL_LOGOUT_TIMEOUT_MS, up to a minute,
 * plus signing and the database), or a second instance would send it again while the first waits.
 */
const MIN_LEASE_MS = 60_000;
const LEASE_MARGIN_MS = 30_000;

/** The lease a round claims its batch for; the batch is sent in parallel, so one send's time bounds the round's. */
export function claimLeaseMs(timeoutMs: number): number {
  return Math.max(MIN_LEASE_MS, timeoutMs + LEASE_MARGIN_MS);
}
const BATCH = 20;
const MAX_BACKOFF_MS = 3600_000;

/**
 * Sends the owed back-channel logout notifications (Back-Channel Logout 1.0 §2.5): a form POST of
 * logout_token to the client's registered URI; 200 or 204 is delivered (§2.8), anything else, or no
 * answer, is retried with exponential backoff up to BACKCHANNEL_LOGOUT_MAX_ATTEMPTS, then recorded
 * as failed. Every instance polls; each notification is claimed by exactly one (LogoutDeliveryStore).
 */
@Injectable()
export class BackchannelLogoutSender implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(BackchannelLogoutSender.name);
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;

  constructor(
    private readonly deliveries: LogoutDeliveryStore,
    private readonly clients: ClientsService,
    private readonly tokens: LogoutTokenIssuer,
    private readonly clock: Clock,
    @Inject(logoutConfig.KEY) private readonly config: LogoutConfig,
    @Inject(outboundConfig.KEY) private readonly outbound: OutboundConfig,
  ) {}

  onApplicationBootstrap(): void {
    if (this.config.pollMs === 0) return;
    this.timer = setInterval(() => {
      this.running ??= this.sendDue()
        .catch((error: unknown) => this.logger.warn(`Back-channel logout: ${describe(error)}`))
        .finally(() => (this.running = undefined));
    }, this.config.pollMs);
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  /** One round: claims what is due and sends it; returns when every attempt has an outcome. */
  async sendDue(): Promise<void> {
    const now = this.clock.now();
    const claimed = await this.deliveries.claimDue(now, new Date(now.getTime() + claimLeaseMs(this.config.timeoutMs)), BATCH);
    await Promise.all(claimed.map((delivery) => this.send(delivery)));
  }

  private async send(delivery: LogoutDelivery): Promise<void> {
    const client = await this.clients.findById(delivery.clientId);
    const uri = client?.openId.backchannelLogoutUri;
    if (!client || !uri) return this.deliveries.attemptFailed(delivery.id, 'the client no longer has a backchannel_logout_uri', null);
    let outcome: string;
    try {
      const status = await postForm(uri, { logout_token: await this.tokens.issue(client, delivery.subject, delivery.sid) }, { ...this.outbound, timeoutMs: this.config.timeoutMs });
      if (status === 200 || status === 204) return this.deliveries.delivered(delivery.id, this.clock.now());
      outcome = `answered ${status}`;
    } catch (error) {
      outcome = describe(error);
    }
    const retry = delivery.attempts < this.config.maxAttempts;
    const backoff = Math.min(MAX_BACKOFF_MS, this.config.retrySeconds * 1000 * 2 ** (delivery.attempts - 1));
    await this.deliveries.attemptFailed(delivery.id, outcome.slice(0, 500), retry ? new Date(this.clock.now().getTime() + backoff) : null);
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
