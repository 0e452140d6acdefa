import { Module } from '@nestjs/common';
import { CommonModule } from '../common/common.module.js';
import { InstancesModule } from '../instances/instances.module.js';
import { InstanceHeartbeat } from './instance-heartbeat.js';
import { PurgeModule } from './purge.module.js';
import { PurgeScheduler } from './purge.scheduler.js';

/** Background housekeeping of the server: the scheduled purge of expired codes and tokens, and this instance's heartbeat. */
@Module({ imports: [CommonModule, InstancesModule, PurgeModule], providers: [PurgeScheduler, InstanceHeartbeat], exports: [PurgeModule] })
export class HousekeepingModule {}
