import { AdminApiRefusal } from './console-errors.js';

/**
 * The console's one way of showing what is wrong with a form (issue 48): every form page gets a
 * FormErrors, rendered by views/admin-console/form-errors.eta (a summary above the form, each
 * problem a link to its field) and by the field partials (text-field, select-field, choice-field:
 * the message again beside its field, which is then aria-invalid and described by it). WCAG 2.1
 * SC 3.3.1 and 3.3.3; the GOV.UK error summary pattern, which people who do not use the product
 * every day recognise.
 */

/** One problem with a form, and the id of the field it is about (its name); none: about the form as a whole. */
export interface FieldProblem {
  field?: string;
  message: string;
}

/** What a form page shows of its problems: all of them (the summary), and each field's first one (beside it). */
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

/** A page title that starts with "Error: " when the form has problems: the title is what a screen reader reads first (the GOV.UK design system's advice). */
export function titleWith(errors: FormErrors, title: string): string {
  return errors.list.length > 0 ? `Error: ${title}` : title;
}

/** Which field of a form an admin API refusal is about: the first rule whose error code or description matches. */
export interface FieldRule {
  field: string;
  /** The API's `error` code (invalid_redirect_uri), or a pattern of its error_description. */
  matches: string | RegExp;
}

/**
 * The admin API's refusal of what was typed, put beside the field it names. The API answers one
 * `error_description` for the whole request, written for a person (it is the CLI's message too):
 * shown as it is, placed by the rules; one no rule places is about the form as a whole.
 */
export function problemOfRefusal(refusal: AdminApiRefusal, rules: readonly FieldRule[]): FieldProblem {
  const rule = rules.find(({ matches }) => (typeof matches === 'string' ? refusal.error === matches : matches.test(refusal.message)));
  return rule === undefined ? { message: refusal.message } : { field: rule.field, message: refusal.message };
}

/** Refusals of what was typed: malformed (400) or in conflict with what exists (409, a name taken). */
export const INPUT_REFUSALS: readonly number[] = [400, 409];
/** The same, for a form that names something else by what was typed (a member, a provider): that it is not there (404) is about the input too. */
export const INPUT_OR_UNKNOWN_REFUSALS: readonly number[] = [400, 404, 409];

/**
 * The API's answer, or its refusal of what was typed (one of `statuses`), for the form to show
 * with that status. A refusal of who is asking (403), of something gone (404, unless the form
 * names it) or anything else goes on to the console's refusal page.
 */
export async function formCall<T>(call: () => Promise<T>, statuses: readonly number[] = INPUT_REFUSALS): Promise<{ answer: T } | { refused: AdminApiRefusal }> {
  try {
    return { answer: await call() };
  } catch (error) {
    if (error instanceof AdminApiRefusal && statuses.includes(error.status)) return { refused: error };
    throw error;
  }
}

/** A text field of a posted form: its string, cut at `max` characters; '' for none. */
export function formText(value: unknown, max = 2000): string {
  return typeof value === 'string' ? value.slice(0, max) : '';
}

/** The values of a group of checkboxes of the same name (one arrives as a string, several as an array), at most `max`. */
export function formValues(value: unknown, max = 20): string[] {
  return [value]
    .flat()
    .filter((item): item is string => typeof item === 'string')
    .slice(0, max);
}

/** A checkbox of a posted form: ticked when sent with any value (an unticked box is not sent at all). */
export function formFlag(value: unknown): boolean {
  return value !== undefined && value !== '';
}
