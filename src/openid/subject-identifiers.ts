import { Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { createHash } from 'node:crypto';
import type { Client } from '../clients/client.entity.js';
import { sectorOfClient, SubjectType } from '../clients/openid-client-settings.js';
import { ServerKeysService } from '../keys/server-keys.service.js';

/** The server key that salts pairwise subjects (kept in server_keys, shared by every instance). */
export const PAIRWISE_SALT_NAME = 'pairwise-subject-salt';

/**
 * The sub a client sees for a person (OpenID Connect Core §8): the user's id, stable and never
 * reassigned, for public clients; for pairwise ones, SHA-256 of the client's sector, the user's id
 * and a server salt (§8.1), so that clients of different sectors cannot correlate the person.
 */
@Injectable()
export class SubjectIdentifiers implements OnApplicationBootstrap {
  private salt?: Buffer;

  constructor(private readonly serverKeys: ServerKeysService) {}

  async onApplicationBootstrap(): Promise<void> {
    this.salt = await this.serverKeys.getOrCreate(PAIRWISE_SALT_NAME);
  }

  of(client: Client, userId: string): string {
    if (client.openId.subjectType !== SubjectType.Pairwise) return userId;
    const sector = sectorOfClient(client.redirectUris, client.openId);
    if (!this.salt || sector === undefined) throw new Error(`Pairwise subject for client ${client.id} without ${this.salt ? 'a sector' : 'the salt'}`);
    return createHash('sha256').update(sector).update('\0').update(userId).update('\0').update(this.salt).digest('base64url');
  }
}
