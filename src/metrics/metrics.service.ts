import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';
import { metricsConfig, type MetricsConfig } from '../config/metrics.config.js';
import { startMetricsListener, stopMetricsListener } from './metrics-listener.js';

/** The `route` label of requests that matched no route: never the raw URL, which would make one series per path probed. */
export const UNMATCHED_ROUTE = 'unmatched';

/**
 * Latchkey's Prometheus metrics. Each application owns its registry (not prom-client's global one),
 * so that several instances in one process (the e2e tests) keep separate counts. Every label takes
 * values from a bounded set: route patterns, grant types we implement, RFC 6749 error codes.
 */
@Injectable()
export class MetricsService implements OnApplicationBootstrap, OnApplicationShutdown {
  readonly registry = new Registry();
  private readonly logger = new Logger(MetricsService.name);
  private server?: Server;

  private readonly httpDuration = new Histogram({
    name: 'latchkey_http_request_duration_seconds',
    help: 'Time to answer an HTTP request, by method, route pattern and status code.',
    labelNames: ['method', 'route', 'status_code'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  private readonly tokensIssued = new Counter({
    name: 'latchkey_tokens_issued_total',
    help: 'Successful token endpoint responses (RFC 6749 §5.1), by grant type.',
    labelNames: ['grant_type'] as const,
    registers: [this.registry],
  });

  private readonly tokenRequestsRefused = new Counter({
    name: 'latchkey_token_requests_refused_total',
    help: 'Token requests answered with an OAuth error (RFC 6749 §5.2), by grant type and error code.',
    labelNames: ['grant_type', 'error'] as const,
    registers: [this.registry],
  });

  private readonly codesRedeemed = new Counter({
    name: 'latchkey_authorization_codes_redeemed_total',
    help: 'Authorization codes exchanged for tokens.',
    registers: [this.registry],
  });

  private readonly codesReplayed = new Counter({
    name: 'latchkey_authorization_codes_replayed_total',
    help: 'Authorization codes presented again after their first use; each revokes the tokens issued from it (RFC 6749 §4.1.2).',
    registers: [this.registry],
  });

  constructor(@Inject(metricsConfig.KEY) private readonly config: MetricsConfig) {
    if (config.enabled) collectDefaultMetrics({ register: this.registry });
  }

  /** Where the metrics listener is bound; undefined while it is not listening (METRICS_ENABLED=false). */
  get metricsAddress(): AddressInfo | undefined {
    return (this.server?.address() as AddressInfo | null) ?? undefined;
  }

  observeHttpRequest(method: string, route: string | undefined, statusCode: number, seconds: number): void {
    this.httpDuration.observe({ method, route: route ?? UNMATCHED_ROUTE, status_code: String(statusCode) }, seconds);
  }

  tokenIssued(grantType: string): void {
    this.tokensIssued.inc({ grant_type: grantType });
  }

  tokenRequestRefused(grantType: string, error: string): void {
    this.tokenRequestsRefused.inc({ grant_type: grantType, error });
  }

  codeRedeemed(): void {
    this.codesRedeemed.inc();
  }

  codeReplayed(): void {
    this.codesReplayed.inc();
  }

  async onApplicationBootstrap(): Promise<void> {
    if (!this.config.enabled) return;
    this.server = await startMetricsListener(this.registry, this.config.host, this.config.port);
    const { address, port } = this.metricsAddress!;
    this.logger.log(`Prometheus metrics on http://${address}:${port}/metrics`);
  }

  async onApplicationShutdown(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (server) await stopMetricsListener(server);
  }
}
