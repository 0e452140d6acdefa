import { Controller, Get, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { AdminRoute } from '../admin/admin-access.js';
import { ADMIN_API, sendAdminJson } from '../admin/admin-reply.js';
import { DoctorRuns } from './doctor-runs.js';

/** `doctor` over HTTP (issue 48): the report `doctor --json` prints, for the auditor and the owner. */
@Controller(ADMIN_API)
export class DoctorController {
  constructor(private readonly doctor: DoctorRuns) {}

  @Get('doctor')
  @AdminRoute('system', 'read')
  async report(@Res() reply: FastifyReply): Promise<void> {
    sendAdminJson(reply, await this.doctor.run());
  }
}
