import type { AuditEvent } from '../audit/audit-event.entity.js';
import { DEVICE_MEMORY_DAYS } from '../sessions/device-history.js';

/** One line of the account page's "Recent security events". */
export interface SecurityEventLine {
  at: Date;
  text: string;
  /** The address it came from, when the event recorded one. */
  ip: string | null;
  /** Something to look at: a failure, a refusal, a sign-in from a new device. */
  warning: boolean;
}

type Wording = (event: AuditEvent, clientName: (id: string) => string) => string;

const count = (n: unknown, one: string, many: string): string => (n === 1 ? one : `${typeof n === 'number' ? n : 'Some'} ${many}`);

/** How the person proved who they are (RFC 8176 amr values), as they would say it. */
function signInMethod(details: Record<string, unknown>): string {
  const amr = Array.isArray(details.amr) ? details.amr : [];
  const via = typeof details.idp === 'string' ? ` through your organization's account` : '';
  if (amr.includes('hwk') || amr.includes('swk')) return `Signed in with a passkey${via}`;
  if (amr.includes('otp')) return `Signed in with ${via ? 'your organization\'s account' : 'your password'} and a one-time code`;
  return via ? `Signed in${via}` : 'Signed in with your password';
}

/**
 * The person's own events (issue 48), worded for them. Events that repeat another one are left out
 * (a passkey sign-in is also a user.signed_in; a one-time code used is part of its sign-in); an
 * event without a wording here is shown by its name, so that nothing is silently hidden.
 */
const WORDING: Record<string, Wording | null> = {
  'user.signed_in': (event) => signInMethod(event.details),
  'user.sign_in_failed': () => 'Failed sign-in: wrong password',
  // Recorded with the sign-in it follows (user.signed_in), which says how; this says where.
  'user.new_device': (event) => `Signed in from a new device: ${typeof event.details.device === 'string' ? event.details.device : 'unknown'} (none of your sessions of the last ${DEVICE_MEMORY_DAYS} days was on it)`,
  'user.signed_in_upstream': null,
  'passkey.signed_in': null,
  'factor.totp.used': null,
  'factor.failed': (event) => (event.details.kind === 'recovery' ? 'Failed sign-in: wrong recovery code' : 'Failed sign-in: wrong one-time code'),
  'factor.recovery_code.used': () => 'Signed in with a recovery code',
  'factor.totp.enrolled': () => 'One-time codes turned on, with new recovery codes',
  'factor.totp.enrolment_failed': () => 'Setting up one-time codes failed: wrong code',
  'factor.recovery_codes.regenerated': () => 'New recovery codes made; the old ones stopped working',
  'factor.removed': (event) => (event.details.passkeys ? 'Every second factor and passkey removed' : 'One-time codes turned off'),
  'passkey.added': (event) => `Passkey added${typeof event.details.name === 'string' ? `: ${event.details.name}` : ''}`,
  'passkey.removed': () => 'Passkey removed',
  'passkey.sign_in_refused': () => 'Passkey sign-in refused',
  'passkey.cloned_authenticator': () => 'A copy of one of your passkeys was detected: it no longer signs in',
  'user.password_changed': (event) => `Password changed; ${count(event.details.sessions_ended, 'one other session ended', 'other sessions ended')}`,
  'user.password_change_refused': () => 'Password change refused: wrong current password',
  'user.password_reset': () => 'Password reset from an email link; every session ended',
  'user.password_set': () => 'Password set; every session ended',
  'user.updated': (event) => `Profile changed${Array.isArray(event.details.changed) && event.details.changed.length > 0 ? ` (${event.details.changed.join(', ')})` : ''}`,
  'email.change_requested': () => 'Email address change asked for: a link went to the new address',
  'email.changed': () => 'Email address changed',
  'email.verified': () => 'Email address confirmed',
  'session.ended': () => 'A session was ended',
  'user.signed_out_elsewhere': (event) => `Signed out everywhere else: ${count(event.details.sessions_ended, 'one session ended', 'sessions ended')}`,
  'user.signed_out_everywhere': () => 'Signed out everywhere',
  'consent.given': (event, name) => `Allowed ${name(clientIdOf(event))} access`,
  'consent.withdrawn': (event, name) => `Withdrew the access of ${name(clientIdOf(event))}`,
  'user.created': () => 'Account created',
  'user.registered': () => 'Account created',
  'user.invited': () => 'Invitation sent',
  'user.invitation_accepted': () => 'Invitation accepted, password chosen',
  'user.deactivated': () => 'Account deactivated; every session ended',
  'user.reactivated': () => 'Account reactivated',
  'admin_role.granted': (event) => `Administrator role given: ${String(event.details.role)}`,
  'admin_role.revoked': (event) => `Administrator role taken away: ${String(event.details.role)}`,
};

/** The client a consent event is about (its subject is `client:<id>`). */
export function clientIdOf(event: AuditEvent): string {
  return event.subject.startsWith('client:') ? event.subject.slice('client:'.length) : '';
}

/** Events where something went wrong or was refused, or that the person should check was them: marked on the page. */
const WARNINGS = new Set(['user.new_device', 'user.sign_in_failed', 'user.password_change_refused', 'factor.failed', 'factor.totp.enrolment_failed', 'passkey.sign_in_refused', 'passkey.cloned_authenticator', 'user.deactivated']);

/** The line for `event` of the person `userId`, or null for an event that repeats another. */
export function securityEventLine(event: AuditEvent, userId: string, clientName: (id: string) => string): SecurityEventLine | null {
  const wording = event.action in WORDING ? WORDING[event.action] : (e: AuditEvent) => `Account event: ${e.action}`;
  if (wording === null) return null;
  const text = wording(event, clientName);
  // Made by someone else than the person (an administrator, a directory, an identity provider): said so.
  const byOther = event.actor !== `user:${userId}`;
  return { at: event.at, text: byOther ? `${text} (by ${describeActor(event.actor)})` : text, ip: event.ip, warning: WARNINGS.has(event.action) };
}

function describeActor(actor: string): string {
  if (actor === 'cli') return 'an administrator';
  if (actor.startsWith('user:')) return 'an administrator';
  if (actor.startsWith('client:')) return 'an administration client';
  if (actor.startsWith('idp:')) return "your organization's identity provider";
  return 'the server';
}
