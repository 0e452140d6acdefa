import { Injectable } from '@nestjs/common';
import { runDoctor, type DoctorReport } from './doctor.js';

/**
 * `doctor`'s checks for GET /admin/api/v1/doctor: the very function the CLI runs (src/doctor/),
 * from this instance's environment, without `--url` (the outside checks make this server fetch a
 * URL, which is the CLI's to ask for). The checks open their own database connection and reach
 * Redis and every upstream identity provider, so requests arriving while a run is under way share
 * its report instead of starting another.
 */
@Injectable()
export class DoctorRuns {
  private running: Promise<DoctorReport> | null = null;

  run(): Promise<DoctorReport> {
    this.running ??= runDoctor({}).finally(() => {
      this.running = null;
    });
    return this.running;
  }
}
