/**
 * The admin console's own client id (issue 48): known, so that an operator recognises it in the
 * client list and the audit log, and so that the clients' rules can name it.
 * admin-console/console-client.ts registers it and keeps it right; a clients:apply document that
 * leaves it out does not delete it (client-declarations.ts).
 */
export const CONSOLE_CLIENT_ID = 'latchkey-admin-console';

/** Where the authorization endpoint sends the administrator back to the console: under the issuer, served by this server itself. */
export const CONSOLE_CALLBACK_PATH = '/admin/callback';
