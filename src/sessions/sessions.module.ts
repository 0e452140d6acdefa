import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { SessionClient } from './session-client.entity.js';
import { SessionEndListeners } from './session-end-listeners.js';
import { Session } from './session.entity.js';
import { SessionsService } from './sessions.service.js';
import { SessionSearchStore } from './session-search.store.js';
import { SessionStore } from './session.store.js';
import { CommonModule } from '../common/common.module.js';

/** Server-side sign-in sessions (issue 15: signing out ends the session on every instance). */
@Module({
  imports: [CommonModule, TypeOrmModule.forFeature([Session, SessionClient])],
  providers: [SessionStore, SessionSearchStore, SessionsService, SessionEndListeners],
  exports: [SessionsService, SessionStore, SessionEndListeners],
})
export class SessionsModule {}
