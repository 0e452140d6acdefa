import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { randomBytes } from 'node:crypto';
import type { Repository } from 'typeorm';
import { SealedBox } from '../common/sealed-box.js';
import { Transactions } from '../database/transactions.js';
import { ServerKey } from './server-key.entity.js';

@Injectable()
export class ServerKeysService {
  private readonly boxes = new Map<string, Promise<SealedBox>>();

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

  /**
   * The sealed box (AES-256-GCM, SealedBox) of one kind of secret at rest: with the configured keys
   * (an environment variable, newest first, to rotate) or, when none is set, the key generated and
   * kept under `name`, shared by every instance. Loaded once per process; a failed load (the
   * database away) is tried again by the next caller. Call it at start (onApplicationBootstrap), so
   * that a key is never generated first inside a transaction whose rollback would drop it.
   */
  sealedBox(name: string, configuredKeys: readonly Buffer[]): Promise<SealedBox> {
    let box = this.boxes.get(name);
    if (box === undefined) {
      box = (async () => new SealedBox(name, configuredKeys.length > 0 ? [...configuredKeys] : [await this.getOrCreate(name)]))();
      box.catch(() => this.boxes.delete(name));
      this.boxes.set(name, box);
    }
    return box;
  }
}
