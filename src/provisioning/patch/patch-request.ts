import { ScimError } from '../http/scim-error.js';
import { isObject } from '../filter/resource-path.js';
import { SCHEMA, SCIM_TYPE } from '../scim.constants.js';

export type PatchOp = 'add' | 'replace' | 'remove';

export interface PatchOperation {
  op: PatchOp;
  path?: string;
  value?: unknown;
}

/** Enough for any connector's batch of changes, small enough to bound the work of one request. */
export const MAX_OPERATIONS = 1000;

/**
 * RFC 7644 §3.5.2: a PatchOp message. `op` is compared without regard to case, as Entra ID sends
 * "Add", "Replace" and "Remove".
 */
export function parsePatchRequest(body: Record<string, unknown>): PatchOperation[] {
  const schemas = body.schemas;
  if (!Array.isArray(schemas) || !schemas.some((schema) => typeof schema === 'string' && schema.toLowerCase() === SCHEMA.patchOp.toLowerCase())) {
    throw ScimError.badRequest(SCIM_TYPE.invalidSyntax, `A PATCH body declares "schemas": ["${SCHEMA.patchOp}"]`);
  }
  const operations = body.Operations ?? body.operations;
  if (!Array.isArray(operations) || operations.length === 0) throw ScimError.badRequest(SCIM_TYPE.invalidSyntax, 'A PATCH body has a non-empty "Operations" array');
  if (operations.length > MAX_OPERATIONS) throw ScimError.badRequest(SCIM_TYPE.tooMany, `At most ${MAX_OPERATIONS} operations per request`);
  return operations.map((operation, index) => {
    if (!isObject(operation)) throw ScimError.badRequest(SCIM_TYPE.invalidSyntax, `Operation ${index + 1} is not an object`);
    const op = typeof operation.op === 'string' ? operation.op.toLowerCase() : undefined;
    if (op !== 'add' && op !== 'replace' && op !== 'remove') throw ScimError.badRequest(SCIM_TYPE.invalidSyntax, `Operation ${index + 1}: "op" is add, replace or remove`);
    if (operation.path !== undefined && (typeof operation.path !== 'string' || operation.path.trim() === '')) throw ScimError.badRequest(SCIM_TYPE.invalidPath, `Operation ${index + 1}: "path" is a non-empty string`);
    const path = typeof operation.path === 'string' ? operation.path.trim() : undefined;
    // §3.5.2.2: remove needs a path; §3.5.2.1, §3.5.2.3: add and replace need a value.
    if (op === 'remove' && path === undefined) throw ScimError.badRequest(SCIM_TYPE.noTarget, `Operation ${index + 1}: remove needs a "path"`);
    if (op !== 'remove' && operation.value === undefined) throw ScimError.badRequest(SCIM_TYPE.invalidValue, `Operation ${index + 1}: ${op} needs a "value"`);
    return { op, ...(path === undefined ? {} : { path }), ...(operation.value === undefined ? {} : { value: operation.value }) };
  });
}
