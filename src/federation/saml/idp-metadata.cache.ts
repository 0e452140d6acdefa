import { Inject, Injectable } from '@nestjs/common';
import { readFile } from 'node:fs/promises';
import { Clock } from '../../common/clock.js';
import { outboundConfig, type OutboundConfig } from '../../config/outbound.config.js';
import type { SamlSettings } from '../../identity-providers/identity-provider-settings.js';
import { getText } from '../../outbound/outbound-http.js';
import { IdpMetadataError, MAX_METADATA_BYTES, parseIdpMetadata, type IdpMetadata } from './idp-metadata.js';

/** A metadata URL is read again after this long (IdPs publish a rolled-over certificate ahead of using it). */
const URL_TTL_MS = 60 * 60 * 1000;
/** A metadata file is read again after this long, so an administrator's replaced file takes effect without a restart. */
const FILE_TTL_MS = 60 * 1000;
/** A response signed with a key the cached metadata lacks makes us read the metadata again (a rolled key), not more often than this. */
const REFRESH_COOLDOWN_MS = 60 * 1000;
/** After a failure, the failure is the answer for this long: requests cannot make us fetch at will. */
const FAILURE_COOLDOWN_MS = 30 * 1000;
const TIMEOUT_MS = 5000;

interface Entry {
  /** The URL or file it was read from: a provider whose settings changed is a miss. */
  source: string;
  metadata: IdpMetadata;
  readAt: number;
}

/**
 * Each SAML identity provider's metadata, read from its URL (through the SSRF-protected outbound
 * client: no private address unless allowed, no redirect, bounded in time and size) or its file,
 * and kept per instance: metadata is public and every instance reads the same document.
 */
@Injectable()
export class IdpMetadataCache {
  private readonly entries = new Map<string, Entry>();
  private readonly reading = new Map<string, Promise<IdpMetadata>>();
  private readonly failures = new Map<string, { at: number; error: IdpMetadataError }>();

  constructor(
    private readonly clock: Clock,
    @Inject(outboundConfig.KEY) private readonly outbound: OutboundConfig,
  ) {}

  /** The metadata of provider `id`; `refresh` asks for a fresh copy (a signature no cached key verifies), within the cooldown. */
  async metadataOf(id: string, settings: SamlSettings, options: { refresh?: boolean } = {}): Promise<IdpMetadata> {
    const source = settings.metadataUrl ?? `file:${settings.metadataFile}`;
    const now = this.clock.now().getTime();
    const cached = this.entries.get(id);
    const ttl = settings.metadataUrl !== null ? URL_TTL_MS : FILE_TTL_MS;
    const usable = cached !== undefined && cached.source === source && now - cached.readAt < ttl;
    const refresh = options.refresh === true && cached !== undefined && now - cached.readAt >= REFRESH_COOLDOWN_MS;
    if (usable && !refresh) return cached.metadata;
    const metadata = await this.readOnce(source, settings, now);
    this.entries.set(id, { source, metadata, readAt: now });
    return metadata;
  }

  /** One read per source at a time; a failure answers every request for FAILURE_COOLDOWN_MS. */
  private async readOnce(source: string, settings: SamlSettings, now: number): Promise<IdpMetadata> {
    const failed = this.failures.get(source);
    if (failed && now - failed.at < FAILURE_COOLDOWN_MS) throw failed.error;
    let pending = this.reading.get(source);
    if (!pending) {
      pending = this.read(settings).finally(() => this.reading.delete(source));
      this.reading.set(source, pending);
    }
    try {
      const metadata = await pending;
      this.failures.delete(source);
      return metadata;
    } catch (error) {
      const failure = error instanceof IdpMetadataError ? error : new IdpMetadataError(String(error));
      this.failures.set(source, { at: now, error: failure });
      throw failure;
    }
  }

  private async read(settings: SamlSettings): Promise<IdpMetadata> {
    return parseIdpMetadata(settings.metadataUrl !== null ? await this.fetch(settings.metadataUrl) : await this.readFile(settings.metadataFile!));
  }

  private async fetch(url: string): Promise<string> {
    let answer: { status: number; text: string };
    try {
      answer = await getText(url, MAX_METADATA_BYTES, { ...this.outbound, timeoutMs: TIMEOUT_MS, accept: 'application/samlmetadata+xml, application/xml, text/xml' });
    } catch (error) {
      throw new IdpMetadataError(`the metadata URL could not be read: ${error instanceof Error ? error.message : String(error)}`);
    }
    if (answer.status !== 200) throw new IdpMetadataError(`the metadata URL answered ${answer.status}, not 200`);
    return answer.text;
  }

  private async readFile(path: string): Promise<string> {
    try {
      return await readFile(path, 'utf8');
    } catch (error) {
      throw new IdpMetadataError(`the metadata file ${path} could not be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
    }
  }
}
