import { Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { clientAddress } from './client-address.js';
import { PerMinuteRateLimitGuard } from './per-minute-rate-limit.guard.js';

/**
 * RATE_LIMIT_CLIENT_PER_MINUTE on each client-authenticated endpoint (/token, /introspect,
 * /revoke), per client. Runs after ClientAuthenticationGuard: keyed on the client_id a request
 * merely claims, anyone could spend a victim client's budget.
 */
@Injectable()
export class ClientRateLimitGuard extends PerMinuteRateLimitGuard {
  protected readonly name = 'client';

  protected limit(): number {
    return this.config.clientPerMinute;
  }

  protected subject(request: FastifyRequest & { client: { id: string; isPublic: boolean } }): string[] {
    const { client } = request;
    // A public client proves nothing (RFC 6749 §2.1, §10.1: its id is no secret), so anyone could
    // claim it: its budget is per address too, lest a stranger spend a whole mobile app's budget.
    return [request.routeOptions.url ?? request.url, client.id, client.isPublic ? clientAddress(request) : ''];
  }

  protected describe(limit: number): string {
    return `This client may make ${limit} requests a minute to this endpoint.`;
  }
}
