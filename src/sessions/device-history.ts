/**
 * How long a device is remembered (issue 48): a sign-in is compared with the person's sessions of
 * the last DEVICE_MEMORY_DAYS, so the purge keeps ended and expired sessions that long
 * (PurgeService) instead of deleting them as soon as they are over.
 */
export const DEVICE_MEMORY_DAYS = 90;

/**
 * What the person's sessions of the last DEVICE_MEMORY_DAYS say about the device a new session was
 * started on (its description, device-description.ts):
 * - `first`: none of them recorded a device, so there is nothing to compare with: the first sign-in
 *   ever, the first after DEVICE_MEMORY_DAYS away, the first since devices are recorded. Not a new
 *   device: calling every first sign-in one would only teach people to ignore the event.
 * - `known`: one of them was started on this device.
 * - `new`: some were started on devices, none on this one.
 */
export type DeviceHistory = 'first' | 'known' | 'new';
