import { Inject, Injectable } from '@nestjs/common';
import { DomainError } from '../common/domain-error.js';
import { outboundConfig, type OutboundConfig } from '../config/outbound.config.js';
import { getJson } from '../outbound/outbound-http.js';

/** A sector identifier document is a short list of URIs; more than this is not one. */
const MAX_BYTES = 64 * 1024;
const TIMEOUT_MS = 5000;

/**
 * OpenID Connect Core §8.1 and Dynamic Client Registration §5: a client's sector_identifier_uri
 * must serve a JSON array that lists every one of its redirect URIs. Fetched at registration and at
 * each update that names it, with the SSRF protection of every outgoing request (no private or
 * loopback address unless allowed, no redirects, bounded in time and size).
 */
@Injectable()
export class SectorIdentifierVerifier {
  constructor(@Inject(outboundConfig.KEY) private readonly outbound: OutboundConfig) {}

  async verify(uri: string, redirectUris: readonly string[]): Promise<void> {
    const refuse = (problem: string): DomainError => new DomainError('invalid_client_metadata', `sector_identifier_uri ${JSON.stringify(uri)} ${problem}.`);
    let answer: { status: number; json: unknown };
    try {
      answer = await getJson(uri, MAX_BYTES, { ...this.outbound, timeoutMs: TIMEOUT_MS });
    } catch (error) {
      throw refuse(`could not be read: ${error instanceof Error ? error.message : String(error)}`);
    }
    if (answer.status !== 200) throw refuse(`answered ${answer.status}, not 200`);
    const listed = answer.json;
    if (!Array.isArray(listed) || !listed.every((entry) => typeof entry === 'string')) throw refuse('must serve a JSON array of redirect URIs');
    const missing = redirectUris.filter((redirectUri) => !listed.includes(redirectUri));
    if (missing.length > 0) throw refuse(`does not list the redirect URI(s) ${missing.join(', ')}`);
  }
}
