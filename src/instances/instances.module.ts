import { Module } from '@nestjs/common';
import { CommonModule } from '../common/common.module.js';
import { InstanceStore } from './instance.store.js';
import { InstancesService } from './instances.service.js';
import { ThisInstance } from './this-instance.js';

/**
 * The server instances that share the database (issue 48): this process's identity, the table each
 * one's heartbeat (housekeeping/instance-heartbeat.ts) writes, and the list the admin API reads.
 */
@Module({ imports: [CommonModule], providers: [ThisInstance, InstanceStore, InstancesService], exports: [ThisInstance, InstanceStore, InstancesService] })
export class InstancesModule {}
