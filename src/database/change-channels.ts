/**
 * The channels the tables' triggers notify when a change commits (migration
 * ChangeNotifications1765000000000), named once for the stores that keep those rows and for those
 * whose writes change them (a client's or a person's deletion takes their tokens with it).
 */
export const CHANGE_CHANNELS = {
  /** A client's id, on any change of it. */
  clients: 'latchkey_clients',
  /** An access token's hash, on its revocation or its deletion before it expired. */
  tokens: 'latchkey_tokens',
} as const;
