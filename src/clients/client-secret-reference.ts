import { isSecretReference, readSecretReference } from '../config/secret-reference.js';

/**
 * Where a clients:apply document's secret references may point, by who applies it:
 * - `server`: the CLI's operator, on the server, who has its environment and files anyway: any
 *   variable, any file (a relative path from the document's directory);
 * - `api`: a caller of the admin API, who has neither: only a variable of the LATCHKEY_CLIENT_
 *   family (API_CLIENT_SECRET_ENV), never a file.
 */
export type SecretReferenceScope = { kind: 'server'; baseDirectory: string; env?: NodeJS.ProcessEnv } | { kind: 'api'; env?: NodeJS.ProcessEnv };

/**
 * The environment variables a document applied over HTTP may name, for the reason the identity
 * providers' API_SECRET_ENV has: a caller naming DATABASE_URL or SESSION_SECRET as a client's
 * secret would have the server take that value as the secret, and /token (or the plan's
 * "changed") would then confirm their guesses of it; a file could be any file the server may
 * read. A variable of this family is set on every instance for the purpose, and nothing else.
 */
export const API_CLIENT_SECRET_ENV = /^LATCHKEY_CLIENT_[A-Z0-9_]{1,112}$/;

/** The forms a reference takes, as the messages name them. */
export function referenceForms(scope: SecretReferenceScope): string {
  return scope.kind === 'server' ? '{"env": "VARIABLE"} or {"file": "PATH"}' : '{"env": "LATCHKEY_CLIENT_…"}';
}

/** The secret `reference` names, or why there is none, a sentence about client_secret (naming the variable or file, never a value). */
export function clientSecretFrom(reference: unknown, scope: SecretReferenceScope): { secret: string } | { problem: string } {
  if (!isSecretReference(reference)) {
    return { problem: `client_secret must say where the secret is, ${referenceForms(scope)}, not hold it: the document is meant for version control` };
  }
  if (scope.kind === 'server') return read(reference, scope.baseDirectory, scope.env);
  if ('file' in reference) return { problem: 'client_secret names a file: over the admin API only {"env": "LATCHKEY_CLIENT_…"} (files are named with clients:apply on the server)' };
  if (!API_CLIENT_SECRET_ENV.test(reference.env)) {
    return { problem: `client_secret names ${JSON.stringify(reference.env.slice(0, 64))}: over the admin API only an environment variable LATCHKEY_CLIENT_… (upper-case letters, digits and _), set on every instance for the purpose` };
  }
  // The directory is never used: the reference names a variable.
  return read(reference, '.', scope.env);
}

function read(...args: Parameters<typeof readSecretReference>): { secret: string } | { problem: string } {
  const result = readSecretReference(...args);
  return 'problem' in result ? { problem: `client_secret: ${result.problem}` } : result;
}
