import { Injectable } from '@nestjs/common';
import type { Client } from '../clients/client.entity.js';
import { introspectionRefusal } from './introspector.js';
import { ResourceServersService } from './resource-servers.service.js';

/**
 * Who may learn what about a token at the introspection endpoint, decided here and nowhere else.
 * A token without an audience, or restricted to Latchkey's own APIs (the issuer) alone, is shown to
 * every introspecting client, as it opens nothing else. A token whose audience names any other
 * resource (RFC 8707), with or without the issuer beside it, opens that resource: it is shown only
 * to the client one of those resources introspects with (`resources:register --introspector`); to
 * any other caller it is `{"active": false}`, as RFC 7662 §2.2 requires when "the protected resource
 * is not allowed to introspect this particular token": one resource server cannot read, or replay
 * elsewhere with confidence, the tokens of another. The issuer in the audience lets no one in:
 * Latchkey's own APIs check tokens in process, they have no introspector.
 */
@Injectable()
export class IntrospectionAccess {
  constructor(private readonly servers: ResourceServersService) {}

  refusal(client: Client): string | undefined {
    return introspectionRefusal(client);
  }

  /** May `client` see a token restricted to `audience` (space-separated resources; null when unrestricted)? One indexed read when it names other resources. */
  async maySee(client: Client, audience: string | null): Promise<boolean> {
    if (audience === null) return true;
    const others = audience.split(' ').filter((resource) => resource !== this.servers.localResource);
    if (others.length === 0) return true;
    return (await this.servers.findByUris(others)).some((server) => server.introspectionClientId === client.id);
  }
}
