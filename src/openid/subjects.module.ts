import { Module } from '@nestjs/common';
import { KeysModule } from '../keys/keys.module.js';
import { SubjectIdentifiers } from './subject-identifiers.js';

/** The sub each client knows a person by (public or pairwise), for every module that names people to clients. */
@Module({
  imports: [KeysModule],
  providers: [SubjectIdentifiers],
  exports: [SubjectIdentifiers],
})
export class SubjectsModule {}
