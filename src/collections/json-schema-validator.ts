import { Ajv2020, type ErrorObject } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

// ajv-formats is CommonJS; under Node's ESM loader its plugin is the module itself.
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

/**
 * One Ajv (JSON Schema 2020-12, the dialect Fastify also uses) with the standard formats, strict
 * so that a misspelt keyword in a collection schema is an error at start-up, not a silent no-op.
 */
export function createAjv(options: { validateSchema?: boolean } = {}): Ajv2020 {
  return addFormats(new Ajv2020({ strict: true, allErrors: true, allowUnionTypes: true, ...options }));
}

/** Ajv's errors in words a client developer can act on: `/title: must be string`. */
export function describeSchemaErrors(errors: ErrorObject[] | null | undefined): string {
  return (errors ?? [])
    .map((e) => {
      if (e.keyword === 'additionalProperties') return `${e.instancePath || '/'}: unknown attribute "${String(e.params.additionalProperty)}"`;
      if (e.keyword === 'required') return `${e.instancePath || '/'}: missing required attribute "${String(e.params.missingProperty)}"`;
      return `${e.instancePath || '/'}: ${e.message ?? 'is invalid'}`;
    })
    .join('; ');
}
