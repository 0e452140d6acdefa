import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { Clock } from '../common/clock.js';
import { PACKAGE_VERSION } from '../common/package-version.js';

/**
 * This process, as the instances table knows it: an id taken at boot (a restart is a new
 * instance), where it runs and what it runs. One per application (InstancesModule's provider).
 */
@Injectable()
export class ThisInstance {
  readonly id = randomUUID();
  readonly hostname = hostname();
  readonly pid = process.pid;
  readonly version = PACKAGE_VERSION;
  readonly node = process.versions.node;
  readonly startedAt: Date;

  constructor(clock: Clock) {
    this.startedAt = clock.now();
  }
}
