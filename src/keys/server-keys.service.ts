import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { randomBytes } from 'node:crypto';
import type { Repository } from 'typeorm';
import { Transactions } from '../database/transactions.js';
import { ServerKey } from './server-key.entity.js';

@Injectable()
export class ServerKeysService {
  constructor(
    @InjectRepository(ServerKey) private readonly keys: Repository<ServerKey>,
    private readonly transactions: Transactions,
  ) {}

  /**
   * The named key, generated on first use. Instances starting together race to insert; the insert
   * ignores a conflict and everyone then reads the single winner, so all of them share one key.
   */
  async getOrCreate(name: string, bytes = 32): Promise<Buffer> {
    await this.transactions.write((manager) => manager.createQueryBuilder().insert().into(ServerKey).values({ name, value: randomBytes(bytes).toString('base64') }).orIgnore().execute());
    const key = await this.keys.findOneByOrFail({ name });
    return Buffer.from(key.value, 'base64');
  }
}
