import { Injectable, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance } from 'fastify';
import { MetricsService } from './metrics.service.js';

/**
 * Times every HTTP request of the public listener into latchkey_http_request_duration_seconds.
 * Added in onModuleInit, before the app listens: Fastify builds each route's hook list when the
 * instance becomes ready, so a root hook added now applies to every route, and to the 404 handler.
 */
@Injectable()
export class HttpMetricsHook implements OnModuleInit {
  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly metrics: MetricsService,
  ) {}

  onModuleInit(): void {
    const fastify = this.adapterHost.httpAdapter?.getInstance<FastifyInstance>();
    if (!fastify) return;
    // reply.elapsedTime runs from Fastify's receipt of the request (its own onRequest mark) to now.
    // The route label is the pattern Fastify matched (/api/v1/notes/:id), undefined when none did.
    fastify.addHook('onResponse', async (request, reply) => {
      this.metrics.observeHttpRequest(request.method, request.routeOptions.url, reply.statusCode, reply.elapsedTime / 1000);
    });
  }
}
