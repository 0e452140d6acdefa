import { Module } from '@nestjs/common';
import { PurgeService } from './purge.service.js';

/** The purge of expired codes and tokens, without a schedule: what the CLI's `purge` command uses. */
@Module({ providers: [PurgeService], exports: [PurgeService] })
export class PurgeModule {}
