import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { IsNull, LessThan, MoreThan, Not, type DataSource, type EntityManager } from 'typeorm';
import { Transactions } from '../database/transactions.js';
import { SigningKey } from './signing-key.entity.js';

/** The signing_keys table. Small (a few rows per algorithm), read in full by each instance's key ring. */
@Injectable()
export class SigningKeyStore {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly transactions: Transactions,
  ) {}

  /** Keys still published at `now`: those that sign, will sign, or signed tokens that may still be valid. */
  published(now: Date): Promise<SigningKey[]> {
    return this.dataSource.manager.find(SigningKey, {
      where: [{ publishedUntil: IsNull() }, { publishedUntil: MoreThan(now) }],
      order: { alg: 'ASC', generation: 'ASC' },
    });
  }

  /** Every key the table holds, retired ones included (for `keys:list`). */
  all(): Promise<SigningKey[]> {
    return this.dataSource.manager.find(SigningKey, { order: { alg: 'ASC', generation: 'ASC' } });
  }

  /** Inserts the key unless one of its algorithm and generation exists; returns whether this one went in. */
  async insertIfAbsent(key: SigningKey, manager?: EntityManager): Promise<boolean> {
    const work = (within: EntityManager) => within.createQueryBuilder().insert().into(SigningKey).values(key).orIgnore().execute();
    await (manager ? work(manager) : this.transactions.write(work));
    const stored = await (manager ?? this.dataSource.manager).findOneBy(SigningKey, { alg: key.alg, generation: key.generation });
    return stored?.kid === key.kid;
  }

  latestGeneration(alg: string, manager: EntityManager): Promise<SigningKey | null> {
    return manager.findOne(SigningKey, { where: { alg }, order: { generation: 'DESC' } });
  }

  /** Schedules every still-open key of `alg` but `exceptKid` to leave the JWKS at `until`. */
  async retireOthers(alg: string, exceptKid: string, until: Date, manager: EntityManager): Promise<void> {
    await manager.update(SigningKey, { alg, kid: Not(exceptKid), publishedUntil: IsNull() }, { publishedUntil: until });
  }

  /** Deletes keys that left the JWKS before `cutoff`: nothing they signed can still be valid. */
  async purgeRetired(cutoff: Date): Promise<number> {
    const result = await this.transactions.write((manager) => manager.delete(SigningKey, { publishedUntil: LessThan(cutoff) }));
    return result.affected ?? 0;
  }
}
