import { Module } from '@nestjs/common';
import { JtiUseStore } from './jti-use.store.js';

/** Single-use JWTs (DPoP proofs, client assertions): the replay table, shared by every instance. */
@Module({ providers: [JtiUseStore], exports: [JtiUseStore] })
export class ReplayModule {}
