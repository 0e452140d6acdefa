/**
 * A conditional UPDATE (`?` placeholders) that lets a write go ahead only when it changes one row:
 * the single-use rules of the token endpoint (a code redeemed once, a refresh token rotated once),
 * offered by the store of the row it burns and run by the store of what it guards, in one statement
 * on PostgreSQL (TokenStore.insertAfter). `name` names the prepared statements built on it.
 */
export interface Gate {
  name: string;
  sql: string;
  parameters: unknown[];
}
