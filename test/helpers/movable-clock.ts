import { jest } from '@jest/globals';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Clock } from '../../src/common/clock.js';

/**
 * A present the test moves forward instead of sleeping (a one-time code is accepted once per
 * 30-second step, a console session idles out), read by every app it is attached to.
 */
export class MovableClock {
  private offset = 0;

  /** The test's present: the real time, moved on by every advance() so far. */
  readonly now = (): Date => new Date(Date.now() + this.offset);

  /** Moves the present on by `ms` milliseconds. */
  advance(ms: number): void {
    this.offset += ms;
  }

  /** Makes `nest`'s Clock read this present. */
  attachTo(nest: NestFastifyApplication): void {
    jest.spyOn(nest.get(Clock), 'now').mockImplementation(this.now);
  }
}
