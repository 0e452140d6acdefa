import { Module } from '@nestjs/common';
import { AccessModule } from '../access/access.module.js';
import { PurgeController } from './purge.controller.js';
import { PurgeModule } from './purge.module.js';

/**
 * POST /admin/api/v1/housekeeping/purge (issue 48), declared here rather than in AdminApiModule, as
 * doctor's route is: the purge deletes email links, whose folder builds on auth/, which builds on
 * admin/, so admin/ importing the purge would close a cycle. The route is the admin API's all the
 * same: under its path, decided by its AdminAccess.
 */
@Module({
  imports: [AccessModule, PurgeModule],
  controllers: [PurgeController],
})
export class PurgeApiModule {}
