import { readFileSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';

/**
 * Where a document kept in version control says a secret is, instead of holding it: an environment
 * variable (`{"env": "APP_SECRET"}`) or a file (`{"file": "/run/secrets/app"}`, as Docker and
 * Kubernetes mount secrets; a relative path is read from the document's directory).
 */
export type SecretReference = { env: string } | { file: string };

export function isSecretReference(value: unknown): value is SecretReference {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const keys = Object.keys(value);
  const [key] = keys;
  return keys.length === 1 && (key === 'env' || key === 'file') && typeof (value as Record<string, unknown>)[key] === 'string' && (value as Record<string, string>)[key] !== '';
}

/**
 * The secret a reference names, or a message saying why there is none. A file's trailing line
 * break is not part of the secret (`echo secret > file` writes one). Messages name the variable or
 * the file, never what it holds.
 */
export function readSecretReference(reference: SecretReference, baseDirectory: string, env: NodeJS.ProcessEnv = process.env): { secret: string } | { problem: string } {
  if ('env' in reference) {
    const value = env[reference.env];
    return value ? { secret: value } : { problem: `the environment variable ${reference.env} is not set` };
  }
  const path = isAbsolute(reference.file) ? reference.file : resolve(baseDirectory, reference.file);
  try {
    const secret = readFileSync(path, 'utf8').replace(/\r?\n$/, '');
    return secret ? { secret } : { problem: `the file ${path} is empty` };
  } catch (error) {
    return { problem: `cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? 'error'})` };
  }
}
