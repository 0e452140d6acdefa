import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ServerKey } from './server-key.entity.js';
import { ServerKeysService } from './server-keys.service.js';

@Module({
  imports: [TypeOrmModule.forFeature([ServerKey])],
  providers: [ServerKeysService],
  exports: [ServerKeysService],
})
export class KeysModule {}
