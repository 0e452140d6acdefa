import { plainToInstance } from 'class-transformer';
import { validateSync, type ValidationError } from 'class-validator';

/** Thrown at start-up when the environment holds a wrong or missing value. */
export class ConfigValidationError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigValidationError';
  }
}

/** Values of these variables never appear in messages: they hold secrets or URLs with passwords. */
const SENSITIVE = /SECRET|PASSWORD|TOKEN|KEY|_URL$/;

function describe(error: ValidationError): string[] {
  const got = SENSITIVE.test(error.property) ? '' : ` (got ${JSON.stringify(error.value)})`;
  const own = Object.values(error.constraints ?? {}).map((message) => `${error.property}: ${message}${got}`);
  return [...own, ...(error.children ?? []).flatMap(describe)];
}

/**
 * Validates one config namespace's slice of the environment against a class-validator schema,
 * so a wrong value stops the app with one clear message per problem (brocoders' validate-config).
 */
export function validateEnv<T extends object>(schema: new () => T, env: NodeJS.ProcessEnv): T {
  const instance = plainToInstance(schema, env, { enableImplicitConversion: true, exposeDefaultValues: true });
  const errors = validateSync(instance, { skipMissingProperties: false, whitelist: false });
  if (errors.length > 0) throw new ConfigValidationError(errors.flatMap(describe));
  return instance;
}
