/**
 * A short description of the device a person signs in from, derived from the User-Agent header
 * (RFC 9110 §10.1.5): "Firefox on Windows", "Safari on iPhone", "curl" (issue 48: the account page
 * lists sessions by device, and a sign-in from a device none of the person's recent sessions had
 * is a security event).
 *
 * Only this description is stored, never the header: it is less personal data (no versions, build
 * numbers or device models, which together fingerprint a person), its size is bounded, and a
 * browser update is not a new device. It is made only of the fixed words below and, for a tool
 * that is not a browser, the first product name reduced to letters, digits, `.`, `_` and `-`: no
 * markup, control character or quote can come through from the header, whatever it holds.
 */

/** The longest description stored (the sessions.device column). */
export const DEVICE_DESCRIPTION_MAX = 100;

/** What a sign-in without a usable User-Agent is described as. */
export const UNKNOWN_DEVICE = 'Unknown device';

/** Only the start of the header is looked at: real ones are a few hundred characters. */
const LOOKED_AT = 512;

/** The longest product name kept for a tool that is not a browser (`python-requests`, `Go-http-client`). */
const PRODUCT_MAX = 40;

/** First match wins: browsers built on Chrome or Safari name themselves before the engine they copy. */
const BROWSERS: readonly (readonly [RegExp, string])[] = [
  [/\bEdg(?:e|A|iOS)?\//, 'Edge'],
  [/\bOPR\/|\bOPiOS\/|\bOpera\b/, 'Opera'],
  [/\bSamsungBrowser\//, 'Samsung Internet'],
  [/\bVivaldi\//, 'Vivaldi'],
  [/\b(?:Firefox|FxiOS)\//, 'Firefox'],
  [/\b(?:Chrome|CriOS|Chromium|HeadlessChrome)\//, 'Chrome'],
  [/\bMSIE |\bTrident\//, 'Internet Explorer'],
  [/\bSafari\//, 'Safari'],
];

/** First match wins: iPhones say "like Mac OS X", Android and ChromeOS say "Linux". */
const SYSTEMS: readonly (readonly [RegExp, string])[] = [
  [/\biPhone\b|\biPod\b/, 'iPhone'],
  [/\biPad\b/, 'iPad'],
  [/\bAndroid\b/, 'Android'],
  [/\bCrOS\b/, 'ChromeOS'],
  [/\bWindows\b/, 'Windows'],
  [/\bMacintosh\b|\bMac OS X\b/, 'macOS'],
  [/\bLinux\b|\bX11\b/, 'Linux'],
];

/** The first product's name (RFC 9110 §10.1.5: product = token ["/" product-version]), when the header starts with one. */
const FIRST_PRODUCT = /^[A-Za-z0-9._-]+/;

/** "Firefox on Windows", "Safari on iPhone", "curl", or UNKNOWN_DEVICE: at most PRODUCT_MAX characters, so well within DEVICE_DESCRIPTION_MAX. */
export function describeDevice(userAgent: string | undefined): string {
  // Control characters (Unicode's Cc: C0, DEL, C1) become spaces, so that they separate words rather than join them.
  const header = (userAgent ?? '').slice(0, LOOKED_AT).replace(/\p{Cc}/gu, ' ').trim();
  if (header === '') return UNKNOWN_DEVICE;
  const browser = BROWSERS.find(([pattern]) => pattern.test(header))?.[1];
  const system = SYSTEMS.find(([pattern]) => pattern.test(header))?.[1];
  // Every browser's header starts with Mozilla/5.0 (Opera's of old with Opera/): one we cannot name is still a browser.
  const name = browser ?? (/^(?:Mozilla|Opera)\//.test(header) ? 'Unknown browser' : undefined);
  if (name !== undefined) return system === undefined ? name : `${name} on ${system}`;
  // A tool (curl, python-requests, an app's own client): its name, without version or comments.
  return FIRST_PRODUCT.exec(header)?.[0].slice(0, PRODUCT_MAX) ?? UNKNOWN_DEVICE;
}
