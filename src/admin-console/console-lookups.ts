import type { ConsoleApi, Query } from './console-api.js';

/** How far a lookup follows a list: 50 pages of 200, far beyond a search for one username or the resource servers of a deployment. */
const MAX_PAGES = 50;

/**
 * The first item of an admin API list that `match` accepts, following `next` from the first page;
 * undefined when the list ends (or MAX_PAGES pass) without one. For what the API names by something
 * other than its path: a person by username, a resource server by id.
 */
async function findInList<T>(api: ConsoleApi, path: string, query: Query, match: (item: T) => boolean): Promise<T | undefined> {
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const answer = await api.get<{ items: T[]; next: string | null }>(path, { ...query, limit: '200', cursor });
    const found = answer.items.find(match);
    if (found !== undefined || answer.next === null) return found;
    cursor = new URL(answer.next, 'http://console.invalid').searchParams.get('cursor') ?? undefined;
    if (cursor === undefined) return undefined;
  }
  return undefined;
}

export interface PersonRef {
  id: string;
  username: string;
}

/**
 * The person with this username: the API's search (part of a username, name or email) narrowed to
 * the exact username, or else to the one username that differs only in case (people type `Ana`
 * for `ana`); undefined when there is none, or several that differ only in case.
 */
export async function personNamed(api: ConsoleApi, username: string): Promise<PersonRef | undefined> {
  const exact = await findInList<PersonRef>(api, '/people', { q: username }, (person) => person.username === username);
  if (exact !== undefined) return exact;
  const lower = username.toLowerCase();
  const answer = await api.get<{ items: PersonRef[] }>('/people', { q: username, limit: '200' });
  const alike = answer.items.filter((person) => person.username.toLowerCase() === lower);
  return alike.length === 1 ? alike[0] : undefined;
}

export interface ResourceServerView {
  id: string;
  uri: string;
  name: string;
  access_token_format: string;
  introspector: string | null;
  created_at: string;
}

/** The resource server with this id, from the API's list (the admin API lists and deletes them; it has no route to read one). */
export function resourceServerWithId(api: ConsoleApi, id: string): Promise<ResourceServerView | undefined> {
  return findInList<ResourceServerView>(api, '/resource-servers', {}, (server) => server.id === id);
}

export interface LiveSessionView {
  id: string;
  person: PersonRef;
  device: string | null;
  ip: string | null;
  created_at: string;
  expires_at: string;
  applications: { client_id: string; name: string | null }[];
}

/** The person's live session with this id, from the API's list of their sessions (a person has few); undefined once it ended or expired. */
export function liveSessionWithId(api: ConsoleApi, personId: string, id: string): Promise<LiveSessionView | undefined> {
  return findInList<LiveSessionView>(api, '/sessions', { person: personId }, (session) => session.id === id);
}
