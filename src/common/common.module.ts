import { Module } from '@nestjs/common';
import { Clock } from './clock.js';

@Module({ providers: [Clock], exports: [Clock] })
export class CommonModule {}
