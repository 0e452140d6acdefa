import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { CommonModule } from '../common/common.module.js';
import { PushedAuthorizationRequest } from './pushed-request.entity.js';
import { PushedRequestStore } from './pushed-request.store.js';
import { PushedRequests } from './pushed-requests.service.js';

/** Pushed Authorization Requests (RFC 9126): their table and their single use. The /par endpoint is in AuthModule. */
@Module({
  imports: [CommonModule, TypeOrmModule.forFeature([PushedAuthorizationRequest])],
  providers: [PushedRequestStore, PushedRequests],
  exports: [PushedRequests, PushedRequestStore],
})
export class PushedRequestsModule {}
