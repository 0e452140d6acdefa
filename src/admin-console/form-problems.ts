import { AdminApiRefusal } from './console-errors.js';

/** One message for the administrator: beside the field it is about, or about the form as a whole (field null). */
export interface FieldProblem {
  field: string | null;
  message: string;
}

/**
 * What a form page shows after a refusal: a summary at the top, each entry linking to its field
 * (the field's id is its name), and each field's own message beside it, the field marked invalid
 * (WCAG 2.1 SC 3.3.1 and 3.3.3: the error identified, in text, where it is).
 */
export interface FormErrors {
  summary: { href: string | null; message: string }[];
  fields: Record<string, string>;
}

/** Which field of a form an API message is about: the first rule whose error code or description matches. */
export interface FieldRule {
  field: string;
  /** The API's `error` code (invalid_redirect_uri), or a pattern of its error_description. */
  matches: string | RegExp;
}

export function formErrors(problems: readonly FieldProblem[]): FormErrors {
  const fields: Record<string, string> = {};
  for (const problem of problems) if (problem.field !== null && fields[problem.field] === undefined) fields[problem.field] = problem.message;
  return { summary: problems.map((problem) => ({ href: problem.field === null ? null : `#${problem.field}`, message: problem.message })), fields };
}

/**
 * The admin API's refusal of what was typed, put beside the field it names. The API answers one
 * `error_description` for the whole request, written for a person (it is the CLI's message too):
 * shown as it is, placed by the rules; one no rule places is about the form as a whole.
 */
export function problemOfRefusal(refusal: AdminApiRefusal, rules: readonly FieldRule[]): FieldProblem {
  const rule = rules.find(({ matches }) => (typeof matches === 'string' ? refusal.error === matches : matches.test(refusal.message)));
  return { field: rule?.field ?? null, message: refusal.message };
}

/** Whether a refusal is about what was typed (shown on the form), not about who asks (403: the refusal page) or what is gone (404). */
export function isInputRefusal(error: unknown, statuses: readonly number[] = [400, 409]): error is AdminApiRefusal {
  return error instanceof AdminApiRefusal && statuses.includes(error.status);
}
