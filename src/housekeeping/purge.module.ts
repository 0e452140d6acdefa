import { Module } from '@nestjs/common';
import { PurgeService } from './purge.service.js';
import { CommonModule } from '../common/common.module.js';

/** The purge of expired codes and tokens, without a schedule: what the CLI's `purge` command uses. */
@Module({ imports: [CommonModule], providers: [PurgeService], exports: [PurgeService] })
export class PurgeModule {}
