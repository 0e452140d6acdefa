import { Inject, Injectable } from '@nestjs/common';
import { appConfig, type AppConfig } from '../../config/app.config.js';

/** The API's version segment: /api/v1 (Nest URI versioning, prefix "api/v"; see resources.setup.ts). */
export const API_VERSION = '1';

/**
 * Absolute URLs of the API, built on ISSUER (the public origin, as a load balancer exposes it),
 * never on the request's Host header, which a client controls.
 */
@Injectable()
export class ResourceLinks {
  private readonly base: string;

  constructor(@Inject(appConfig.KEY) app: AppConfig) {
    this.base = `${app.issuer}/api/v${API_VERSION}`;
  }

  item(collection: string, id: string): string {
    return `${this.base}/${collection}/${encodeURIComponent(id)}`;
  }

  /** The next page: the same query with the cursor replaced (RFC 8288 Link, rel="next"). */
  nextPage(collection: string, query: Record<string, unknown>, cursor: string): string {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(query)) if (name !== 'cursor' && typeof value === 'string') params.set(name, value);
    params.set('cursor', cursor);
    return `${this.base}/${collection}?${params}`;
  }
}
