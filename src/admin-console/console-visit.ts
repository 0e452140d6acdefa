import { permittingScopes, type AdminAction, type AdminArea } from '../scopes/admin-scopes.js';
import type { ConsoleApi } from './console-api.js';
import type { Flash } from './console-cookie.js';

/** The signed-in administrator, as GET /admin/api/v1/me names them at this request. */
export interface ConsoleAdministrator {
  userId: string;
  username: string;
  name: string | null;
  roles: string[];
  /** The admin scopes their roles allow now (AdminAccess's answer). */
  scopes: string[];
}

/** One request of a signed-in administrator to the console (ConsoleSessions.visit). */
export class ConsoleVisit {
  constructor(
    readonly administrator: ConsoleAdministrator,
    /** The admin API, called with this administrator's token. */
    readonly api: ConsoleApi,
    readonly csrfToken: string,
    /** What the page before left for this one (post/redirect/get), shown once. */
    readonly flash: Flash,
    /** Whether the sign-in is recent enough for a dangerous action (ADMIN_CONSOLE_REAUTH_SECONDS). */
    readonly recentlySignedIn: boolean,
    private readonly keep: (flash?: Flash) => Promise<void>,
  ) {}

  /**
   * Whether to offer a link or a button: the scopes the API said this administrator holds, read
   * through the same table AdminAccess reads (admin-scopes.ts). Only what is shown follows from it;
   * the API decides every request.
   */
  can(area: AdminArea, action: AdminAction): boolean {
    return permittingScopes({ area, action }).some((scope) => this.administrator.scopes.includes(scope));
  }

  /** Leaves a message or a secret for the page the browser is sent to next. */
  leave(flash: Flash): Promise<void> {
    return this.keep(flash);
  }
}
