import { createHmac } from 'node:crypto';
import type { Page } from './browser.js';

/**
 * An implementation of RFC 6238 (TOTP) independent of the server's library: HMAC-SHA-1 of the
 * 30-second step counter, dynamic truncation (RFC 4226 §5.3), 6 digits.
 */
export function totpCode(base32Key: string, at: Date | number = Date.now()): string {
  const key = base32Decode(base32Key);
  const step = Math.floor((typeof at === 'number' ? at : at.getTime()) / 1000 / 30);
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(step));
  const mac = createHmac('sha1', key).update(counter).digest();
  const offset = mac[mac.length - 1] & 0x0f;
  const binary = ((mac[offset] & 0x7f) << 24) | (mac[offset + 1] << 16) | (mac[offset + 2] << 8) | mac[offset + 3];
  return String(binary % 1_000_000).padStart(6, '0');
}

function base32Decode(text: string): Buffer {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = '';
  for (const char of text.replace(/[\s=]/g, '').toUpperCase()) {
    const value = alphabet.indexOf(char);
    if (value < 0) throw new Error(`Not base32: ${char}`);
    bits += value.toString(2).padStart(5, '0');
  }
  const bytes = bits.match(/.{8}/g) ?? [];
  return Buffer.from(bytes.map((b) => parseInt(b, 2)));
}

/** The key the enrolment page shows for typing (what a person would type into the app). */
export function keyShownOn(page: Page): string {
  const match = /<code id="totp-key">([^<]+)<\/code>/.exec(page.body);
  if (!match) throw new Error(`No key on the page (${page.status}):\n${page.body}`);
  return match[1].replace(/\s/g, '');
}

/** The recovery codes a page shows once. */
export function recoveryCodesShownOn(page: Page): string[] {
  const list = /<ul class="recovery-codes"[^>]*>([\s\S]*?)<\/ul>/.exec(page.body);
  if (!list) throw new Error(`No recovery codes on the page (${page.status}):\n${page.body}`);
  return [...list[1].matchAll(/<code>([^<]+)<\/code>/g)].map((m) => m[1]);
}
