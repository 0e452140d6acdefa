import { Algorithm, hash, verify } from '@node-rs/argon2';
import { Injectable } from '@nestjs/common';

/**
 * argon2id with OWASP's minimum recommendation (19 MiB, 2 passes, 1 lane): human passwords are
 * low-entropy, so their hash must be slow. Costs are stored in the PHC string, so raising them
 * later keeps old hashes verifiable.
 */
const OPTIONS = { algorithm: Algorithm.Argon2id, memoryCost: 19456, timeCost: 2, parallelism: 1 } as const;

@Injectable()
export class PasswordHasher {
  /** A hash of a random password, verified when the username is unknown so that both cases cost the same. */
  private readonly decoy: Promise<string> = hash('latchkey-decoy-password', OPTIONS);

  hash(password: string): Promise<string> {
    return hash(password, OPTIONS);
  }

  async verify(storedHash: string | undefined, password: string): Promise<boolean> {
    const target = storedHash ?? (await this.decoy);
    try {
      const ok = await verify(target, password);
      return ok && storedHash !== undefined;
    } catch {
      return false;
    }
  }
}
