/**
 * One page of a list read by keyset (the admin API's lists, src/admin/admin-paging.ts): up to
 * `limit` rows after `after`, the last row of the previous page (its sort value and its id), or
 * from the start. A store reads limit + 1 rows: the extra one only says a next page exists.
 */
export interface KeysetPage {
  limit: number;
  after: { value: string; id: string } | null;
}

/** `text` for a LIKE pattern written with ESCAPE '\': its own wildcards match only themselves. */
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (character) => `\\${character}`);
}
