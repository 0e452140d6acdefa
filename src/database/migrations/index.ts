import { InitialSchema1763800000000 } from './1763800000000-initial-schema.js';
import { Items1763900000000 } from './1763900000000-items.js';
import { RegistrationAndAudit1764000000000 } from './1764000000000-registration-and-audit.js';

/** Every migration, in order. */
export const MIGRATIONS = [InitialSchema1763800000000, Items1763900000000, RegistrationAndAudit1764000000000];
