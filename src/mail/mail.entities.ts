import { EmailLink } from '../email-links/email-link.entity.js';

/** The entities of mail/ and email-links/, listed in src/schema/entities.ts. */
export const MAIL_ENTITIES: (new () => object)[] = [EmailLink];
