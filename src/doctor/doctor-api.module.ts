import { Module } from '@nestjs/common';
import { AccessModule } from '../access/access.module.js';
import { DoctorController } from './doctor.controller.js';
import { DoctorRuns } from './doctor-runs.js';

/**
 * GET /admin/api/v1/doctor (issue 48), declared here rather than in AdminApiModule: the doctor
 * reads the schema's migrations and entities, whose folder imports admin/ (the roles' entity), so
 * admin/ importing the doctor would close a cycle. The route is the admin API's all the same:
 * under its path, decided by its AdminAccess.
 */
@Module({
  imports: [AccessModule],
  controllers: [DoctorController],
  providers: [DoctorRuns],
})
export class DoctorApiModule {}
