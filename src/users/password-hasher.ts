import { Algorithm, hash, verify } from '@node-rs/argon2';
import { Injectable } from '@nestjs/common';
import { availableParallelism } from 'node:os';
import pLimit from 'p-limit';

/**
 * argon2id with OWASP's minimum recommendation (19 MiB, 2 passes, 1 lane): human passwords are
 * low-entropy, so their hash must be slow. Costs are stored in the PHC string, so raising them
 * later keeps old hashes verifiable.
 */
const OPTIONS = { algorithm: Algorithm.Argon2id, memoryCost: 19456, timeCost: 2, parallelism: 1 } as const;

/**
 * At most one hash per core at a time. More would not finish sooner (each one is all CPU), but each
 * holds its 19 MiB: a burst of sign-ins would push the process's memory up by that much per attempt
 * in flight (bench/RESULTS.md has the figures). The others wait their turn in order.
 */
const hashing = pLimit(availableParallelism());

@Injectable()
export class PasswordHasher {
  /** A hash of a random password, verified when the username is unknown so that both cases cost the same. */
  private readonly decoy: Promise<string> = hashing(() => hash('latchkey-decoy-password', OPTIONS));

  hash(password: string): Promise<string> {
    return hashing(() => hash(password, OPTIONS));
  }

  /** Hashes running now and waiting for a core. */
  static load(): { running: number; waiting: number } {
    return { running: hashing.activeCount, waiting: hashing.pendingCount };
  }

  async verify(storedHash: string | undefined, password: string): Promise<boolean> {
    const target = storedHash ?? (await this.decoy);
    try {
      const ok = await hashing(() => verify(target, password));
      return ok && storedHash !== undefined;
    } catch {
      return false;
    }
  }
}
