import { Injectable } from '@nestjs/common';

/**
 * The time source, injected so that expiry is tested by moving a clock instead of sleeping.
 * Tests replace it with a ManualClock through the same provider token.
 */
@Injectable()
export class Clock {
  now(): Date {
    return new Date();
  }

  /** The instant `seconds` from now. */
  inSeconds(seconds: number): Date {
    return new Date(this.now().getTime() + seconds * 1000);
  }
}
