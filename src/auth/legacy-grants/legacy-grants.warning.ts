import { Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { ClientsService } from '../../clients/clients.service.js';
import { legacyGrantsWarning } from '../../clients/legacy-grants.js';

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
      const warning = legacyGrantsWarning(client);
      if (warning) this.logger.warn(warning);
    }
  }
}
