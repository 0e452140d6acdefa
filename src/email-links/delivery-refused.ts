/** An administrator's request for a link that cannot be done as asked (the CLI prints its message, exit 1). */
export class DeliveryRefused extends Error {
  constructor(
    readonly code: 'has_password' | 'user_inactive' | 'no_email' | 'mail_not_configured' | 'username_taken',
    message: string,
  ) {
    super(message);
    this.name = 'DeliveryRefused';
  }
}
