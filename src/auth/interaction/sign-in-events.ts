import type { AuditRecord } from '../../audit/audit.service.js';
import type { AuthenticationMethod } from '../../common/authentication-context.js';
import type { DeviceHistory } from '../../sessions/device-history.js';
import type { SessionOrigin } from '../../sessions/sessions.service.js';

/**
 * The audit events of a sign-in (issue 48: the person's security events), recorded in the new
 * session's own transaction: `user.signed_in`, with how the person proved who they are (RFC 8176
 * amr), the upstream identity provider when there was one, and the device; then, when the person
 * had sessions in the last DEVICE_MEMORY_DAYS but none on this device, `user.new_device`. A first
 * sign-in (nothing to compare with, device-history.ts) is no new device. Both carry the device's
 * description and the address, never the User-Agent header.
 */
export function signInEvents(userId: string, origin: SessionOrigin, methods: readonly AuthenticationMethod[], idp: string | undefined, devices: DeviceHistory): AuditRecord[] {
  const subject = `user:${userId}`;
  const actor = { actor: subject, ip: origin.ip ?? undefined };
  const signedIn: AuditRecord = { actor, action: 'user.signed_in', subject, details: { amr: [...methods], ...(idp === undefined ? {} : { idp }), device: origin.device } };
  if (devices !== 'new') return [signedIn];
  return [signedIn, { actor, action: 'user.new_device', subject, details: { device: origin.device, ip: origin.ip } }];
}
