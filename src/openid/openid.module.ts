import { Module } from '@nestjs/common';
import { CommonModule } from '../common/common.module.js';
import { SigningModule } from '../signing/signing.module.js';
import { IdTokenHintReader } from './id-token-hint.reader.js';
import { SubjectsModule } from './subjects.module.js';
import { ClientsModule } from '../clients/clients.module.js';
import { IdTokenIssuer } from './id-token.issuer.js';
import { UserInfoController } from './userinfo.controller.js';
import { UserInfoService } from './userinfo.service.js';
import { AccessModule } from '../access/access.module.js';
import { UsersModule } from '../users/users.module.js';
import { GroupsModule } from '../groups/groups.module.js';

/** OpenID Connect on top of the OAuth flows: ID tokens (and, next, userinfo and logout). */
@Module({
  imports: [CommonModule, SigningModule, SubjectsModule, AccessModule, UsersModule, ClientsModule, GroupsModule],
  controllers: [UserInfoController],
  providers: [IdTokenIssuer, IdTokenHintReader, UserInfoService],
  exports: [IdTokenIssuer, IdTokenHintReader, SubjectsModule, SigningModule],
})
export class OpenIdModule {}
