import { Inject, Injectable } from '@nestjs/common';
import { createLocalJWKSet, type JSONWebKeySet, type JWTVerifyGetKey } from 'jose';
import type { Client } from '../../clients/client.entity.js';
import { assertPublicSigningKey, type PublicJwk } from '../../clients/client-keys.js';
import { Clock } from '../../common/clock.js';
import { clientAuthConfig, type ClientAuthConfig } from '../../config/client-auth.config.js';
import { outboundConfig, type OutboundConfig } from '../../config/outbound.config.js';
import { getJson } from '../../outbound/outbound-http.js';

/** A key set is a few keys; more than this is no key set. */
const MAX_BYTES = 64 * 1024;
const MAX_KEYS = 10;
const TIMEOUT_MS = 5000;
/** How many clients' key sets are kept; the least recently used goes first. */
const MAX_ENTRIES = 1000;
/** A key the set lacks triggers a fetch (the client rotated), but not more often than this per client. */
const REFETCH_COOLDOWN_MS = 60_000;
/** After a failed fetch, the failure is the answer for this long: requests that name the client cannot make us fetch at will. */
const FAILURE_COOLDOWN_MS = 30_000;

/** Why a client's key set could not be had; the client is told, the server does not fail. */
export class ClientKeysUnavailable extends Error {}

interface Entry {
  /** What the entry was built from: a changed registration is a miss. */
  source: string;
  keys: JWTVerifyGetKey;
  fetchedAt: number;
}

/**
 * The key sets private_key_jwt clients are checked against, built once per client instead of per
 * request. A registered jwks is taken as is; a jwks_uri is fetched through the SSRF-protected
 * outbound client (no private or loopback address unless allowed, no redirects, bounded in time
 * and size), kept CLIENT_JWKS_CACHE_SECONDS, and fetched again early when an assertion names a
 * key the set lacks, at most once a minute per client. At most MAX_ENTRIES clients are kept.
 * Per instance: a key set is public, and every instance fetches the same one.
 */
@Injectable()
export class ClientJwksCache {
  private readonly entries = new Map<string, Entry>();
  /** A fetch in flight per jwks_uri, shared by the requests that wait for it. */
  private readonly fetching = new Map<string, Promise<JSONWebKeySet>>();
  /** Recent failures per jwks_uri (bounded like the entries). */
  private readonly failures = new Map<string, { at: number; error: ClientKeysUnavailable }>();

  constructor(
    private readonly clock: Clock,
    @Inject(clientAuthConfig.KEY) private readonly config: ClientAuthConfig,
    @Inject(outboundConfig.KEY) private readonly outbound: OutboundConfig,
  ) {}

  /** The client's keys; `refresh` asks for a fresh copy of a jwks_uri set (an unknown kid), within the cooldown. */
  async keysOf(client: Client, options: { refresh?: boolean } = {}): Promise<JWTVerifyGetKey> {
    const source = client.jwksUri ?? JSON.stringify(client.jwks);
    const now = this.clock.now().getTime();
    const cached = this.entries.get(client.id);
    const fresh = cached?.source === source && (client.jwksUri === null || now - cached.fetchedAt < this.config.jwksCacheSeconds * 1000);
    const refetch = options.refresh === true && client.jwksUri !== null && cached !== undefined && now - cached.fetchedAt >= REFETCH_COOLDOWN_MS;
    if (cached && fresh && !refetch) {
      // Map order is insertion order: re-inserting marks it most recently used.
      this.entries.delete(client.id);
      this.entries.set(client.id, cached);
      return cached.keys;
    }
    // A registered set was checked at registration; checked again, for rows stored before a rule (an RSA exponent, issue 30).
    const set = client.jwksUri !== null ? await this.fetchOnce(client.jwksUri, now) : client.jwks && usableKeys(client.jwks.keys, "This client's registered jwks holds");
    if (!set) throw new ClientKeysUnavailable('This client has no registered keys');
    const entry: Entry = { source, keys: createLocalJWKSet({ keys: set.keys.map(withoutEdDsaAlias) }), fetchedAt: now };
    this.entries.delete(client.id);
    this.entries.set(client.id, entry);
    while (this.entries.size > MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
    return entry.keys;
  }

  /** One fetch per URI at a time; a failure answers every request for FAILURE_COOLDOWN_MS. */
  private async fetchOnce(uri: string, now: number): Promise<JSONWebKeySet> {
    const failed = this.failures.get(uri);
    if (failed && now - failed.at < FAILURE_COOLDOWN_MS) throw failed.error;
    let pending = this.fetching.get(uri);
    if (!pending) {
      pending = this.fetch(uri).finally(() => this.fetching.delete(uri));
      this.fetching.set(uri, pending);
    }
    try {
      const set = await pending;
      this.failures.delete(uri);
      return set;
    } catch (error) {
      if (error instanceof ClientKeysUnavailable) {
        this.failures.set(uri, { at: now, error });
        while (this.failures.size > MAX_ENTRIES) this.failures.delete(this.failures.keys().next().value!);
      }
      throw error;
    }
  }

  private async fetch(uri: string): Promise<JSONWebKeySet> {
    let answer: { status: number; json: unknown };
    try {
      answer = await getJson(uri, MAX_BYTES, { ...this.outbound, timeoutMs: TIMEOUT_MS });
    } catch (error) {
      throw new ClientKeysUnavailable(`The client's jwks_uri could not be read: ${error instanceof Error ? error.message : String(error)}`);
    }
    if (answer.status !== 200) throw new ClientKeysUnavailable(`The client's jwks_uri answered ${answer.status}, not 200`);
    const keys = (answer.json as { keys?: unknown } | undefined)?.keys;
    if (!Array.isArray(keys) || keys.length === 0 || keys.length > MAX_KEYS) throw new ClientKeysUnavailable(`The client's jwks_uri must serve a JWK Set of 1 to ${MAX_KEYS} keys`);
    return usableKeys(keys, "The client's jwks_uri serves");
  }
}

/**
 * The keys of a set that pass the rules of a registered one (public, asymmetric, signing, RSA with
 * e = 65537), the others left out; none at all is ClientKeysUnavailable saying why the first failed.
 */
function usableKeys(keys: readonly unknown[], what: string): JSONWebKeySet {
  const problems: string[] = [];
  const usable = keys.filter((key, index): key is PublicJwk => {
    try {
      assertPublicSigningKey(key as PublicJwk, index);
      return true;
    } catch (error) {
      problems.push(error instanceof Error ? error.message : String(error));
      return false;
    }
  });
  if (usable.length === 0) throw new ClientKeysUnavailable(`${what} no public signing key we accept (${problems[0] ?? 'no keys'})`);
  return { keys: usable as JSONWebKeySet['keys'] };
}

/**
 * RFC 9864: "Ed25519" is the fully specified name of what "EdDSA" means for an Ed25519 key, and
 * libraries now sign with either (oauth4webapi with "Ed25519"). A key registered under one name
 * would not be selected for a JWS under the other, so their alg is dropped: the key's type and
 * curve still decide which algorithm can verify with it.
 */
function withoutEdDsaAlias(key: JSONWebKeySet['keys'][number]): JSONWebKeySet['keys'][number] {
  if (key.kty !== 'OKP' || key.crv !== 'Ed25519' || (key.alg !== 'EdDSA' && key.alg !== 'Ed25519')) return key;
  const { alg: _alias, ...rest } = key;
  return rest;
}
