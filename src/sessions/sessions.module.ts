import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Session } from './session.entity.js';
import { SessionsService } from './sessions.service.js';
import { SessionStore } from './session.store.js';
import { CommonModule } from '../common/common.module.js';

/** Server-side sign-in sessions (issue 15: signing out ends the session on every instance). */
@Module({
  imports: [CommonModule, TypeOrmModule.forFeature([Session])],
  providers: [SessionStore, SessionsService],
  exports: [SessionsService, SessionStore],
})
export class SessionsModule {}
