import { Inject, Injectable } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance } from 'fastify';
import { appConfig, type AppConfig } from '../config/app.config.js';

export interface InProcessRequest {
  method: string;
  /** The path and query, under this server. */
  path: string;
  headers?: Record<string, string>;
  body?: string;
  /** Whose request this is: the administrator's address (request.ip), so the audit trail and the rate limits see them, not the console. */
  remoteAddress: string;
}

export interface InProcessResponse {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: string;
}

/**
 * HTTP requests from the console to this very server, served in-process by Fastify's inject: the
 * token endpoint, revocation, discovery and the admin API get a real request, with every hook,
 * guard and filter they have on the network (AdminAccess decides who may do what, as for any other
 * caller), without a round trip through the load balancer, whose address an instance may not be
 * able to reach, and on whichever instance the administrator's request came to.
 */
@Injectable()
export class InProcessHttp {
  private readonly issuer: URL;

  constructor(
    private readonly adapterHost: HttpAdapterHost,
    @Inject(appConfig.KEY) app: AppConfig,
  ) {
    this.issuer = new URL(app.issuer);
  }

  async send(request: InProcessRequest): Promise<InProcessResponse> {
    const fastify = this.adapterHost.httpAdapter.getInstance<FastifyInstance>();
    const response = await fastify.inject({
      method: request.method as 'GET',
      url: request.path,
      // The issuer's host, as a request through the load balancer would name it.
      headers: { host: this.issuer.host, ...request.headers },
      payload: request.body,
      remoteAddress: request.remoteAddress,
    });
    return { status: response.statusCode, headers: response.headers, body: response.body };
  }

  /**
   * A fetch for openid-client (its customFetch) that serves our own issuer's URLs in-process and
   * refuses every other: the console talks to no one else.
   */
  fetchFor(remoteAddress: string): (url: string, options: { method: string; headers: Record<string, string>; body?: unknown }) => Promise<Response> {
    return async (url, options) => {
      const target = new URL(url);
      // An issuer with a path (https://example.com/id) is a prefix the proxy takes off.
      const prefix = this.issuer.pathname.replace(/\/$/, '');
      if (target.origin !== this.issuer.origin || !target.pathname.startsWith(`${prefix}/`)) {
        throw new Error(`The admin console only calls its own issuer, not ${target.origin}`);
      }
      const body = options.body === undefined || options.body === null ? undefined : String(options.body);
      const answer = await this.send({ method: options.method, path: target.pathname.slice(prefix.length) + target.search, headers: options.headers, body, remoteAddress });
      const headers = new Headers();
      for (const [name, value] of Object.entries(answer.headers)) {
        for (const one of [value].flat()) if (one !== undefined) headers.append(name, String(one));
      }
      const empty = answer.status === 204 || answer.status === 304;
      return new Response(empty ? null : answer.body, { status: answer.status, headers });
    };
  }
}
