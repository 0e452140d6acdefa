import { Inject, Injectable } from '@nestjs/common';
import { hkdfSync } from 'node:crypto';
import { SealedBox } from '../common/sealed-box.js';
import { SECRET_PREFIX } from '../common/secrets.js';
import { sessionConfig, type SessionConfig } from '../config/session.config.js';
import { ServerKeysService } from '../keys/server-keys.service.js';

/**
 * The console's keys, derived (HKDF, RFC 5869) from what every instance behind the load balancer
 * already shares: SESSION_SECRET's secrets, newest first, or else the session-cookie key the
 * instances keep in the database (app.setup.ts). Nothing new is stored, and every instance
 * computes the same keys, so a console cookie sealed on one instance opens on all of them, and each
 * instance knows the console client's secret without it being kept anywhere in plain text.
 * Each use has its own HKDF info, so no key serves two purposes.
 */
@Injectable()
export class ConsoleKeys {
  private material?: Promise<readonly (string | Buffer)[]>;
  private box?: Promise<SealedBox>;

  constructor(
    @Inject(sessionConfig.KEY) private readonly session: SessionConfig,
    private readonly serverKeys: ServerKeysService,
  ) {}

  /** Seals the console's cookie (AES-256-GCM): new cookies with the newest key, older ones still open during a SESSION_SECRET rotation. */
  cookieBox(): Promise<SealedBox> {
    this.box ??= this.base().then((keys) => new SealedBox('admin-console-cookie', keys.map((key) => derive(key, 'admin-console-cookie-key'))));
    this.box.catch(() => (this.box = undefined));
    return this.box;
  }

  /**
   * The console client's secret as each key derives it, newest first. The client is registered
   * with the newest; an instance that still has an older key first (a rotation rolling out)
   * authenticates with whichever of its candidates the registration holds (ConsoleClient).
   */
  async clientSecrets(): Promise<string[]> {
    return (await this.base()).map((key) => SECRET_PREFIX.clientSecret + derive(key, 'admin-console-client-secret').toString('base64url'));
  }

  private base(): Promise<readonly (string | Buffer)[]> {
    if (this.material === undefined) {
      this.material = this.session.secrets.length > 0 ? Promise.resolve(this.session.secrets) : this.serverKeys.getOrCreate('session-cookie-key').then((key) => [key]);
      // A failed read (the database away) is tried again by the next caller.
      this.material.catch(() => (this.material = undefined));
    }
    return this.material;
  }
}

function derive(key: string | Buffer, info: string): Buffer {
  return Buffer.from(hkdfSync('sha256', key, 'latchkey', info, 32));
}
