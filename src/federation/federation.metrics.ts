import { Injectable } from '@nestjs/common';
import { Counter } from 'prom-client';
import { MetricsService } from '../metrics/metrics.service.js';

/** Upstream sign-ins per identity provider (issue 45): started, completed (and whether an account was created), failed by reason. */
@Injectable()
export class FederationMetrics {
  private readonly starts: Counter<'idp'>;
  private readonly completions: Counter<'idp' | 'account'>;
  private readonly failures: Counter<'idp' | 'reason'>;

  constructor(metrics: MetricsService) {
    const registers = [metrics.registry];
    this.starts = new Counter({ name: 'latchkey_upstream_sign_ins_started_total', help: 'Browsers sent to an upstream identity provider to sign in, by provider.', labelNames: ['idp'], registers });
    this.completions = new Counter({ name: 'latchkey_upstream_sign_ins_total', help: 'People signed in through an upstream identity provider, by provider and whether their account was created just now.', labelNames: ['idp', 'account'], registers });
    this.failures = new Counter({ name: 'latchkey_upstream_sign_in_failures_total', help: 'Upstream sign-ins that signed nobody in, by provider and reason (unreachable, invalid_answer, denied, upstream_error, expired, no_account, misconfigured).', labelNames: ['idp', 'reason'], registers });
  }

  started(idp: string): void {
    this.starts.inc({ idp });
  }

  signedIn(idp: string, created: boolean): void {
    this.completions.inc({ idp, account: created ? 'created' : 'existing' });
  }

  failed(idp: string, reason: string): void {
    this.failures.inc({ idp, reason });
  }
}
