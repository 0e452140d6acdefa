import { AdminApiRefusal } from './console-errors.js';

/** One problem with a form, and the id of the field it is about when there is one. */
export interface FieldProblem {
  field?: string;
  message: string;
}

/**
 * What a form page shows of its problems: a summary above the form, each linked to its field, and
 * each message again beside its field (WCAG 2.1 SC 3.3.1 and 3.3.3; the GOV.UK error summary
 * pattern, which people who do not use the product every day recognise).
 */
export interface FormErrors {
  list: FieldProblem[];
  byField: Record<string, string>;
}

export const NO_ERRORS: FormErrors = { list: [], byField: {} };

export function formErrors(problems: readonly FieldProblem[]): FormErrors {
  const byField: Record<string, string> = {};
  for (const problem of problems) if (problem.field !== undefined) byField[problem.field] ??= problem.message;
  return { list: [...problems], byField };
}

/**
 * The field an admin API refusal is about, read from its message (the API names the setting it
 * refuses: "issuer must be an https URL"): the first pattern that matches. Only where the message
 * is shown depends on it; the message is the API's own, whichever field it lands beside.
 */
export function problemOf(message: string, fields: readonly (readonly [field: string, pattern: RegExp])[]): FieldProblem {
  return { field: fields.find(([, pattern]) => pattern.test(message))?.[0], message };
}

/**
 * The API's answer, or its refusal of what was typed (400, 404 for a member that is not there, 409
 * for a name taken), for the form to show; a refusal of who is asking (403) or anything else goes on
 * to the refusal page.
 */
export async function formCall<T>(call: () => Promise<T>): Promise<{ answer: T } | { refused: AdminApiRefusal }> {
  try {
    return { answer: await call() };
  } catch (error) {
    if (error instanceof AdminApiRefusal && [400, 404, 409].includes(error.status)) return { refused: error };
    throw error;
  }
}

/** A text field of a posted form: its string, cut at `max` characters; '' for none. */
export function formText(value: unknown, max = 2000): string {
  return typeof value === 'string' ? value.slice(0, max) : '';
}

/** A checkbox of a posted form: ticked when sent (an unticked box is not sent at all). */
export function formFlag(value: unknown): boolean {
  return value === 'true' || value === 'on';
}

/** A page title that starts with "Error: " when the form has problems: the title is what a screen reader reads first (the GOV.UK design system's advice). */
export function titleWith(errors: FormErrors, title: string): string {
  return errors.list.length > 0 ? `Error: ${title}` : title;
}
