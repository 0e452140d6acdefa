import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { PasswordHasher } from './password-hasher.js';
import { User } from './user.entity.js';
import { UsersService } from './users.service.js';
import { UserStore } from './user.store.js';

@Module({
  imports: [TypeOrmModule.forFeature([User])],
  providers: [UserStore, UsersService, PasswordHasher],
  exports: [UsersService],
})
export class UsersModule {}
