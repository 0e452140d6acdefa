import { Inject, Injectable, NotFoundException, type CanActivate } from '@nestjs/common';
import { adminConsoleConfig, type AdminConsoleConfig } from '../config/admin-console.config.js';

/** ADMIN_CONSOLE_ENABLED=false: every console route answers 404, as if it were not there (the admin API stays). */
@Injectable()
export class ConsoleEnabled implements CanActivate {
  constructor(@Inject(adminConsoleConfig.KEY) private readonly config: AdminConsoleConfig) {}

  canActivate(): boolean {
    if (!this.config.enabled) throw new NotFoundException('There is no admin console on this server');
    return true;
  }
}
