import { Module } from '@nestjs/common';
import { EmailLinkStore } from './email-link.store.js';

/** The email_links table alone, without the mail transport: what the purge needs (the CLI's `purge` included). */
@Module({
  providers: [EmailLinkStore],
  exports: [EmailLinkStore],
})
export class EmailLinkStoreModule {}
