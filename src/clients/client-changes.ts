import { Injectable } from '@nestjs/common';

/**
 * Tells this instance's listeners that a change of a client committed here (registration, an
 * update, a deletion). On SQLite, the one instance there is, this is how what a listener keeps
 * learns of a change at once; on PostgreSQL every instance also hears the table's trigger
 * (CLIENT_CHANGES_CHANNEL), which covers the CLI and other instances as well.
 */
@Injectable()
export class ClientChanges {
  private readonly listeners: ((clientId: string) => void)[] = [];

  subscribe(listener: (clientId: string) => void): void {
    this.listeners.push(listener);
  }

  /** Called once the change of `clientId` has committed. */
  committed(clientId: string): void {
    for (const listener of this.listeners) listener(clientId);
  }
}
