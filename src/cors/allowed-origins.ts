import { Inject, Injectable } from '@nestjs/common';
import { ClientChanges } from '../clients/client-changes.js';
import { CLIENT_CHANGES_CHANNEL, ClientStore } from '../clients/client.store.js';
import { originOfUri } from '../common/origin.js';
import { corsConfig, type CorsConfig } from '../config/cors.config.js';
import { databaseConfig, type DatabaseConfig } from '../config/database.config.js';
import { ChangeNotifications, type ChangeListener } from '../database/change-notifications.js';

/** Each origin of a registered redirect URI, with the clients that registered one there. */
export type RegisteredOrigins = ReadonlyMap<string, ReadonlySet<string>>;

/**
 * How long the registered origins are kept. While PostgreSQL's notifications are seen to arrive
 * (ChangeNotifications proves it every 5 s), a change drops them at once on every instance, so
 * the bound only caps what a lost notification could cost. Otherwise (SQLite, where the CLI
 * writes from another process; PostgreSQL while deaf) a change made here drops them at once
 * (ClientChanges) and one made elsewhere is seen within a few seconds.
 */
const NOTIFIED_KEEP_MS = 300_000;
const UNNOTIFIED_KEEP_MS = 5_000;

/**
 * Which browser origins may read Latchkey's answers (src/cors/cors.hook.ts): the origins of the
 * clients' redirect URIs, each with the clients it belongs to, and those of CORS_ALLOWED_ORIGINS,
 * which belong to every client. The registered ones are read with one query of every client's
 * redirect URIs and kept per instance, so a request with an Origin header costs a map lookup,
 * not a database round trip; they are read again after a change of any client. A read that a
 * change overtook serves the requests waiting for it but is not kept.
 */
@Injectable()
export class AllowedOrigins implements ChangeListener {
  private readonly configured: ReadonlySet<string>;
  private kept?: { origins: RegisteredOrigins; until: number };
  private reading?: Promise<RegisteredOrigins>;
  /** Moves on with every change: a read that straddles one is not kept. */
  private generation = 0;
  private readonly postgres: boolean;

  constructor(
    private readonly clients: ClientStore,
    private readonly notifications: ChangeNotifications,
    changes: ClientChanges,
    @Inject(corsConfig.KEY) config: CorsConfig,
    @Inject(databaseConfig.KEY) database: DatabaseConfig,
  ) {
    this.configured = new Set(config.allowedOrigins);
    this.postgres = database.dialect === 'postgres';
    changes.subscribe(() => this.forget());
    if (this.postgres) notifications.subscribe(CLIENT_CHANGES_CHANNEL, this);
  }

  /** Whether `origin` (already known to be an exact origin) may read the answers of endpoints any browser app calls with a token. */
  async allowsAnyClient(origin: string): Promise<boolean> {
    return this.configured.has(origin) || (await this.registered()).has(origin);
  }

  /** Whether `origin` may read an answer given to `clientId`: one of its redirect URIs is there, or it is configured. */
  async allowsClient(origin: string, clientId: string | undefined): Promise<boolean> {
    if (this.configured.has(origin)) return true;
    if (clientId === undefined) return false;
    return (await this.registered()).get(origin)?.has(clientId) ?? false;
  }

  /** The registered origins: kept, or read once for every caller that asks meanwhile. */
  registered(): Promise<RegisteredOrigins> {
    if (this.kept !== undefined && this.kept.until > Date.now()) return Promise.resolve(this.kept.origins);
    if (this.reading === undefined) {
      const reading = this.read().finally(() => {
        if (this.reading === reading) this.reading = undefined;
      });
      this.reading = reading;
    }
    return this.reading;
  }

  changed(): void {
    this.forget();
  }

  hearing(): void {
    this.forget();
  }

  deaf(): void {
    this.forget();
  }

  private async read(): Promise<RegisteredOrigins> {
    const generation = this.generation;
    const origins = new Map<string, Set<string>>();
    for (const { id, redirectUris } of await this.clients.redirectUrisOfAll()) {
      for (const uri of redirectUris) {
        const origin = originOfUri(uri);
        if (origin === undefined) continue;
        const owners = origins.get(origin) ?? new Set<string>();
        owners.add(id);
        origins.set(origin, owners);
      }
    }
    if (generation === this.generation) {
      const notified = this.postgres && this.notifications.hearing;
      this.kept = { origins, until: Date.now() + (notified ? NOTIFIED_KEEP_MS : UNNOTIFIED_KEEP_MS) };
    }
    return origins;
  }

  private forget(): void {
    this.generation++;
    this.kept = undefined;
    this.reading = undefined;
  }
}
