import { DONE } from './account-routes.js';

/** What the page's query may say it was sent back after (account-routes.ts afterForm), read strictly. */
export interface AccountQuery {
  done?: unknown;
  ended?: unknown;
  client?: unknown;
}

/** A notice: a name to show in bold first (an application's), then the text. */
export interface Notice {
  strong?: string;
  text: string;
}

const plural = (n: number, one: string, many: string): string => (n === 1 ? one : many.replace('#', String(n)));
const say = (text: string | undefined): Notice | undefined => (text === undefined ? undefined : { text });

/**
 * The notice at the top of the page after a form did its work (announced as a status). Only known
 * words from the query are read; the one name shown, an application's, is looked up by its id,
 * never taken from the URL (a link could otherwise make the page say anything).
 */
export async function noticeFor(query: AccountQuery, applicationName: (clientId: string) => Promise<string | undefined>): Promise<Notice | undefined> {
  const ended = typeof query.ended === 'string' && /^\d{1,6}$/.test(query.ended) ? Number(query.ended) : undefined;
  switch (query.done) {
    case DONE.profile:
      return say('Your profile was saved.');
    case DONE.password:
      return say(`Your password was changed.${ended === undefined || ended === 0 ? '' : plural(ended, ' You were signed out on 1 other browser.', ' You were signed out on # other browsers.')}`);
    case DONE.sessionEnded:
      return say('That session was ended: the browser it was on is signed out.');
    case DONE.othersEnded:
      return say(ended === undefined ? undefined : plural(ended, 'You were signed out on 1 other browser.', 'You were signed out on # other browsers.'));
    case DONE.passkeyRemoved:
      return say('The passkey was removed.');
    case DONE.withdrawn: {
      const name = typeof query.client === 'string' && query.client.length <= 64 ? await applicationName(query.client) : undefined;
      return name === undefined ? undefined : { strong: name, text: ' no longer has access to your data.' };
    }
    default:
      return undefined;
  }
}
