import { ScimUser } from './users/scim-user.entity.js';

/** The entities of provisioning/, listed in src/schema/entities.ts. */
export const PROVISIONING_ENTITIES: (new () => object)[] = [ScimUser];
