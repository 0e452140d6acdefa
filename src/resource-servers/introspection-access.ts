import { Injectable } from '@nestjs/common';
import type { Client } from '../clients/client.entity.js';
import { introspectionRefusal } from './introspector.js';
import { ResourceServersService } from './resource-servers.service.js';

/**
 * Who may learn what about a token at the introspection endpoint, decided here and nowhere else.
 * A token without an audience, or restricted to Latchkey's own APIs (the issuer), is shown to
 * every introspecting client, as it opens nothing else. A token restricted to other resources
 * (RFC 8707) is shown only to the client a resource in its audience introspects with
 * (`resources:register --introspector`); to any other caller it is `{"active": false}`, as RFC 7662
 * §2.2 requires when "the protected resource is not allowed to introspect this particular token":
 * one resource server cannot read, or replay elsewhere with confidence, the tokens of another.
 */
@Injectable()
export class IntrospectionAccess {
  constructor(private readonly servers: ResourceServersService) {}

  refusal(client: Client): string | undefined {
    return introspectionRefusal(client);
  }

  /** May `client` see a token restricted to `audience` (space-separated resources; null when unrestricted)? One indexed read when restricted. */
  async maySee(client: Client, audience: string | null): Promise<boolean> {
    if (audience === null) return true;
    const resources = audience.split(' ');
    if (resources.includes(this.servers.localResource)) return true;
    return (await this.servers.findByUris(resources)).some((server) => server.introspectionClientId === client.id);
  }
}
