import { ACCOUNT_PAGE } from '../auth/interaction/login.service.js';

/** The account page (issue 48) and the forms it posts; each form answers 303 back to its section, or the page again with what to fix. */
export const ACCOUNT_ROUTES = {
  page: ACCOUNT_PAGE,
  profile: '/account/profile',
  password: '/account/password',
  endSession: '/account/sessions/end',
  endOtherSessions: '/account/sessions/end-others',
  /** The access page of before: now the account page's "Applications with access" section. */
  access: '/account/access',
  withdraw: '/account/access/withdraw',
} as const;

/** What a form just did, named in the 303's query (`done`), so the page can say so; never text from the URL itself. */
export const DONE = {
  profile: 'profile',
  password: 'password',
  sessionEnded: 'session',
  othersEnded: 'others',
  withdrawn: 'withdrawn',
  passkeyRemoved: 'passkey-removed',
} as const;
export type Done = (typeof DONE)[keyof typeof DONE];

/** The section of the page each answer goes back to (the ids of views/account-*.eta). */
export const SECTION: Record<Done, string> = {
  profile: 'profile',
  password: 'password',
  session: 'sessions',
  others: 'sessions',
  withdrawn: 'applications',
  'passkey-removed': 'passkeys',
};

/** Where a form goes after it did `done`: the page, saying so, at the section (`count`: how many sessions ended, `client`: whose access was withdrawn). */
export function afterForm(done: Done, extra: { count?: number; client?: string } = {}): string {
  const query = new URLSearchParams({ done });
  if (extra.count !== undefined) query.set('ended', String(extra.count));
  if (extra.client !== undefined) query.set('client', extra.client);
  return `${ACCOUNT_PAGE}?${query}#${SECTION[done]}`;
}
