import { Injectable, Logger } from '@nestjs/common';
import { AuditService } from '../../audit/audit.service.js';
import { SIGN_IN_FAILED } from '../../audit/sign-in-failures.js';
import type { User } from '../../users/user.entity.js';

/**
 * Records a refused password sign-in in the audit log, so that an administrator can see why
 * someone could not sign in ("why did that sign-in fail") and from where: for an account that
 * exists only (subject `user:<id>`, as factor.failed names it), with the address it came from and
 * whether the account is locked. A name that is no account is not recorded: it may be a password
 * typed into the wrong field, and the log would hold whatever anyone types. The login throttle
 * bounds how many a guesser can add.
 */
@Injectable()
export class FailedSignIns {
  private readonly logger = new Logger(FailedSignIns.name);

  constructor(private readonly audit: AuditService) {}

  /**
   * Not awaited by the sign-in: its answer must take as long for a name that is no account as for
   * one that is (users.service.ts checks a decoy hash for the same reason), and only the second
   * writes a row. Returns the recording, for whoever wants to wait for it.
   */
  note(user: User, address: string): Promise<void> {
    return this.record(user, address).catch((error: unknown) => this.logger.warn(`A failed sign-in was not recorded: ${error instanceof Error ? error.message : String(error)}`));
  }

  private async record(user: User, address: string): Promise<void> {
    const subject = `user:${user.id}`;
    await this.audit.record({ actor: { actor: subject, ip: address }, action: SIGN_IN_FAILED, subject, details: { username: user.username, method: 'password', reason: user.active ? 'wrong_password' : 'locked' } });
  }
}
