import { Injectable } from '@nestjs/common';
import { AuditService } from '../audit/audit.service.js';
import { Clock } from '../common/clock.js';
import { Transactions } from '../database/transactions.js';
import type { Passkey } from '../factors/passkey.entity.js';
import { PasskeyStore } from '../factors/passkey.store.js';
import { SessionsService } from '../sessions/sessions.service.js';

/**
 * What a detected copy of a passkey does. WebAuthn §6.1.1 leaves the policy to the relying party;
 * a counter that does not grow proves that two authenticators hold the key, not which one is the
 * person's. Refusing only that presentation is no defence (issue 43: the copy's counter climbs
 * with each try, and its third passed the stored one), so the key is blocked for both, on its row,
 * by the detection itself, until the person or an administrator removes it.
 */
@Injectable()
export class ClonedPasskeys {
  constructor(
    private readonly store: PasskeyStore,
    private readonly transactions: Transactions,
    private readonly sessions: SessionsService,
    private readonly audit: AuditService,
    private readonly clock: Clock,
  ) {}

  /**
   * Blocks the passkey after a presentation that shows a copy: a counter that did not grow, or a
   * use that lost the race to write its counter. The first detection, in the transaction that
   * blocks, ends every session of the person (no session records which passkey opened it, and the
   * copy may have signed in before the original gave it away; the grants made in them end too) and
   * is audited. Returns since when the passkey is blocked; null when it no longer exists.
   */
  async block(passkey: Passkey, presentedCounter: number): Promise<Date | null> {
    const at = this.clock.now();
    const subject = `user:${passkey.userId}`;
    const outcome = await this.transactions.run(async (manager) => {
      if (!(await this.store.markCloned(passkey.id, at, manager))) return { since: await this.store.clonedAt(passkey.id, manager), first: false };
      const sessionsEnded = await this.sessions.endAllOf(passkey.userId, { manager });
      const details = { passkey: passkey.id, name: passkey.name, stored_counter: passkey.counter, presented_counter: presentedCounter, sessions_ended: sessionsEnded };
      await this.audit.record({ actor: subject, action: 'passkey.cloned_authenticator', subject, details }, manager);
      return { since: at, first: true };
    });
    // Another detection blocked it meanwhile: this presentation is one more on a blocked passkey.
    if (!outcome.first && outcome.since) await this.refused(passkey, outcome.since, presentedCounter);
    return outcome.since;
  }

  /** A presentation of a blocked passkey, with a valid signature: refused whatever its counter, and recorded. */
  refused(passkey: Passkey, since: Date, presentedCounter: number): Promise<void> {
    const subject = `user:${passkey.userId}`;
    const details = { passkey: passkey.id, reason: 'blocked', cloned_at: since.toISOString(), presented_counter: presentedCounter };
    return this.audit.record({ actor: subject, action: 'passkey.sign_in_refused', subject, details });
  }
}
