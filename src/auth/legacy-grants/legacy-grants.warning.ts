import { Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { ClientsService } from '../../clients/clients.service.js';
import { LEGACY_GRANT_TYPES } from '../../common/oauth.constants.js';

/**
 * At start-up, one warning per client an administrator allowed the implicit or password grant
 * (RFC 9700 §2.1.2, §2.4 advise against both), so that the exception stays visible to whoever
 * runs the server. It names the client and the grants, never anything secret.
 */
@Injectable()
export class LegacyGrantsWarning implements OnApplicationBootstrap {
  private readonly logger = new Logger('LegacyGrants');

  constructor(private readonly clients: ClientsService) {}

  async onApplicationBootstrap(): Promise<void> {
    for (const client of await this.clients.list()) {
      const legacy = LEGACY_GRANT_TYPES.filter((g) => client.grantTypes.includes(g));
      if (legacy.length === 0) continue;
      this.logger.warn(`Client ${client.id} ("${client.name}") is allowed the ${legacy.join(' and ')} grant${legacy.length > 1 ? 's' : ''}, which RFC 9700 advises against`);
    }
  }
}
