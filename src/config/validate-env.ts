import { plainToInstance } from 'class-transformer';
import { validateSync, type ValidationError } from 'class-validator';

/** Thrown at start-up when the environment holds a wrong or missing value. */
export class ConfigValidationError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigValidationError';
  }
}

/** Values of these variables never appear in messages: they hold secrets or URLs with passwords (durations such as ACCESS_TOKEN_TTL_SECONDS do not). */
const SENSITIVE = /SECRET|PASSWORD|TOKEN|KEY|_URL$/;
const isSensitive = (name: string): boolean => SENSITIVE.test(name) && !name.endsWith('_SECONDS');

function describe(error: ValidationError, env: NodeJS.ProcessEnv): string[] {
  const raw = env[error.property];
  const got = isSensitive(error.property) ? '' : ` (got ${JSON.stringify(raw ?? error.value)})`;
  // A numeric setting whose text is not a number converts to NaN, which fails every bound; the
  // bounds would then be reported against "null". Say what is actually wrong, once.
  if (typeof error.value === 'number' && Number.isNaN(error.value)) return [`${error.property}: must be a number${got}`];
  const own = Object.values(error.constraints ?? {}).map((message) => `${error.property}: ${message}${got}`);
  return [...own, ...(error.children ?? []).flatMap((child) => describe(child, env))];
}

/**
 * Validates one config namespace's slice of the environment against a class-validator schema,
 * so a wrong value stops the app with one clear message per problem (brocoders' validate-config).
 */
export function validateEnv<T extends object>(schema: new () => T, env: NodeJS.ProcessEnv): T {
  const instance = plainToInstance(schema, env, { enableImplicitConversion: true, exposeDefaultValues: true });
  const errors = validateSync(instance, { skipMissingProperties: false, whitelist: false });
  if (errors.length > 0) throw new ConfigValidationError(errors.flatMap((error) => describe(error, env)));
  return instance;
}
