/** The paths of the email pages (issue 46); each form posts to its own GET's path. */
export const EMAIL_ROUTES = {
  forgot: '/password/forgot',
  reset: '/password/reset',
  invitation: '/invitation',
  verify: '/email/verify',
  account: '/account/email',
  confirmChange: '/email/confirm-change',
  register: '/signup',
  registerConfirm: '/signup/confirm',
} as const;
