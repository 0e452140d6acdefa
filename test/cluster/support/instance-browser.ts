/**
 * A person's browser that talks to one instance in particular, on its own port as the balancer
 * passes requests on (support/target.ts), so that every page, form post and redirect of a sign-in
 * or an approval lands on the instance the test chose, not the next in the round robin.
 */
import { Browser, type Page } from '../../helpers/browser.js';
import type { Cluster } from './cluster.js';
import type { Instance } from './instance.js';
import { forwardedHeaders } from './target.js';

export class InstanceBrowser extends Browser {
  private readonly issuer: string;
  private readonly forwarded: Record<string, string>;

  constructor(
    cluster: Cluster,
    readonly instance: Instance,
  ) {
    super(`http://${instance.address}`);
    this.issuer = cluster.issuer;
    this.forwarded = forwardedHeaders(cluster);
  }

  override get(pathOrUrl: string, headers: Record<string, string> = {}): Promise<Page> {
    return super.get(this.onInstance(pathOrUrl), { ...headers, ...this.forwarded });
  }

  override post(pathOrUrl: string, fields: Record<string, string>, headers: Record<string, string> = {}): Promise<Page> {
    return super.post(this.onInstance(pathOrUrl), fields, { ...headers, ...this.forwarded });
  }

  override postJson(pathOrUrl: string, body: unknown, headers: Record<string, string> = {}): Promise<Page> {
    return super.postJson(this.onInstance(pathOrUrl), body, { ...headers, ...this.forwarded });
  }

  /** The server's redirects name the issuer (the balancer's address): they stay on this instance. */
  private onInstance(pathOrUrl: string): string {
    return pathOrUrl.startsWith(`${this.issuer}/`) ? pathOrUrl.slice(this.issuer.length) : pathOrUrl;
  }
}
