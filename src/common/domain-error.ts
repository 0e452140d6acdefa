/**
 * A rule of the domain was broken by the caller's input (a taken username, a malformed redirect
 * URI). The CLI prints it to stderr; HTTP layers map it to a 4xx. `code` is a stable snake_case id.
 */
export class DomainError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'DomainError';
  }
}
