import { Injectable } from '@nestjs/common';
import { absoluteUriProblem } from '../clients/redirect-uri.policy.js';
import { AccessTokenFormat } from '../resource-servers/resource-server.entity.js';
import { ResourceServersService } from '../resource-servers/resource-servers.service.js';
import { InvalidTargetError } from './errors/oauth-error.js';

/** Bounds on what a request may name: a token for a handful of APIs, not a list of every one. */
const MAX_RESOURCES = 10;
const MAX_URI_LENGTH = 2000;

/** The resources a token is restricted to (its audience), and the format their tokens take. */
export interface Audience {
  uris: string[];
  /** RFC 9068 JWTs when one of the resources registered for them; opaque otherwise. */
  format: AccessTokenFormat;
}

/**
 * Resource indicators (RFC 8707): the `resource` parameters of an authorization, PAR or token
 * request, checked in one place. Each must be an absolute URI without a fragment (§2) naming
 * Latchkey's own APIs (the issuer) or a registered resource server; anything else is
 * invalid_target. At the token endpoint the resources may only narrow what was granted (§2.2).
 */
@Injectable()
export class ResourceIndicators {
  constructor(private readonly servers: ResourceServersService) {}

  /** The request's `resource` values: absent, one (a string) or several (an array); undefined when none. */
  parse(value: unknown): string[] | undefined {
    if (value === undefined || value === '') return undefined;
    const values = Array.isArray(value) ? value : [value];
    if (values.length > MAX_RESOURCES) throw new InvalidTargetError(`At most ${MAX_RESOURCES} resource parameters`);
    for (const uri of values) {
      // absoluteUriProblem refuses whitespace too, so a list of them joins with spaces safely.
      if (typeof uri !== 'string' || uri.length > MAX_URI_LENGTH || 'problem' in absoluteUriProblem(uri) || uri.includes('#')) {
        throw new InvalidTargetError('Each resource must be an absolute URI without a fragment (RFC 8707 §2)');
      }
    }
    return [...new Set(values as string[])];
  }

  /** The audience for `uris`: each must be known. One indexed read, only when a request names resources. */
  async resolve(uris: readonly string[]): Promise<Audience> {
    const remote = uris.filter((uri) => uri !== this.servers.localResource);
    const found = await this.servers.findByUris(remote);
    const unknown = remote.filter((uri) => !found.some((server) => server.uri === uri));
    if (unknown.length > 0) throw new InvalidTargetError(`Unknown resource ${unknown.join(', ')}: name the issuer for this server's APIs, or a registered resource server`);
    const jwt = found.some((server) => server.accessTokenFormat === AccessTokenFormat.Jwt);
    return { uris: [...uris], format: jwt ? AccessTokenFormat.Jwt : AccessTokenFormat.Opaque };
  }

  /** RFC 8707 §2.2: the resources of a token request narrow the granted ones; none means all of them. */
  async narrow(requested: string[] | undefined, granted: readonly string[] | null): Promise<Audience | undefined> {
    if (requested === undefined) return granted === null ? undefined : this.resolve(granted);
    if (granted !== null) {
      const wider = requested.filter((uri) => !granted.includes(uri));
      if (wider.length > 0) throw new InvalidTargetError(`The resource ${wider.join(', ')} was not part of the authorization`);
    }
    return this.resolve(requested);
  }
}

/** A stored list of resources (space-separated), or null when there is none. */
export function splitResources(stored: string | null): string[] | null {
  return stored === null ? null : stored.split(' ');
}
