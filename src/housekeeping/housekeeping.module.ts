import { Module } from '@nestjs/common';
import { PurgeModule } from './purge.module.js';
import { PurgeScheduler } from './purge.scheduler.js';

/** Background housekeeping of the server: the scheduled purge of expired codes and tokens. */
@Module({ imports: [PurgeModule], providers: [PurgeScheduler], exports: [PurgeModule] })
export class HousekeepingModule {}
