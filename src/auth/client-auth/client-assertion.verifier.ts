import { Inject, Injectable } from '@nestjs/common';
import { decodeJwt, errors, jwtVerify } from 'jose';
import type { Client } from '../../clients/client.entity.js';
import { ClientsService } from '../../clients/clients.service.js';
import { FAPI2_SIGNING_ALGORITHMS, SecurityProfiles } from '../../clients/security-profile.js';
import { ASYMMETRIC_JWS_ALGORITHMS, namesOfAlgorithm } from '../../common/asymmetric-algorithms.js';
import { Clock } from '../../common/clock.js';
import { ClientAuthMethod } from '../../common/oauth.constants.js';
import { appConfig, type AppConfig } from '../../config/app.config.js';
import { clientAuthConfig, type ClientAuthConfig } from '../../config/client-auth.config.js';
import { JtiUseStore } from '../../replay/jti-use.store.js';
import { InvalidClientAssertionError } from '../errors/oauth-error.js';
import { ClientJwksCache, ClientKeysUnavailable } from './client-jwks.cache.js';

/** A client assertion is a compact JWS of a few hundred bytes; an RSA-signed one about 1 KB. */
const MAX_ASSERTION_LENGTH = 8192;
const MAX_JTI_LENGTH = 256;
/**
 * Clocks differ between the client and us (RFC 7523 §3 allows "some small leeway"): an nbf up to
 * 10 s ahead is accepted, as FAPI 2.0 §5.3.2.1 asks, and so is an exp 10 s past.
 */
const CLOCK_TOLERANCE_SECONDS = 10;
/** FAPI 2.0 §5.3.2.1: an iat or nbf more than 60 s ahead is refused (jose checks iat only against a maximum age). */
const MAX_FUTURE_SECONDS = 60;

/**
 * private_key_jwt (RFC 7523 §2.2, §3; OpenID Connect Core §9): the client proves itself with a
 * JWT signed by a key it registered. iss and sub are its client_id; aud is our issuer and nothing
 * else (draft-ietf-oauth-rfc7523bis, FAPI 2.0 §5.3.2.1: an assertion whose aud is an endpoint URL
 * can be replayed here by a malicious server that advertised our endpoint as its own; Core §9's
 * token endpoint URL is therefore refused); exp is near (at most
 * CLIENT_ASSERTION_MAX_LIFETIME_SECONDS away), and its jti is accepted once across instances,
 * recorded until exp. Every refusal is invalid_client (RFC 6749 §5.2) saying what was wrong.
 */
@Injectable()
export class ClientAssertionVerifier {
  constructor(
    private readonly clients: ClientsService,
    private readonly keys: ClientJwksCache,
    private readonly uses: JtiUseStore,
    private readonly clock: Clock,
    private readonly profiles: SecurityProfiles,
    @Inject(clientAuthConfig.KEY) private readonly config: ClientAuthConfig,
    @Inject(appConfig.KEY) private readonly app: AppConfig,
  ) {}

  /** The authenticated client. */
  async verify(assertion: string): Promise<Client> {
    if (assertion.length > MAX_ASSERTION_LENGTH) throw refused(`The client assertion is longer than ${MAX_ASSERTION_LENGTH} characters`);
    let clientId: unknown;
    try {
      // Unverified, only to know whose keys to check it with; nothing else is read before the signature holds.
      clientId = decodeJwt(assertion).sub;
    } catch {
      throw refused('The client assertion is not a JWT (RFC 7523 §3)');
    }
    if (typeof clientId !== 'string' || clientId.length === 0 || clientId.length > 64) throw refused('The client assertion\'s sub must be the client_id');
    const client = await this.clients.findById(clientId);
    if (!client || client.tokenEndpointAuthMethod !== ClientAuthMethod.PrivateKeyJwt) throw refused('Client authentication failed');

    const payload = await this.verified(assertion, client);
    // A single value: one aud naming another server beside us is what the audience injection needs. FAPI 2.0 wants the string form.
    const single = typeof payload.aud === 'string' || (!this.profiles.applies(client) && payload.aud?.length === 1);
    if (!single) throw refused(`The client assertion's aud must be the issuer${this.profiles.applies(client) ? ', as a single string (FAPI 2.0)' : ' alone'}`);
    const now = Math.floor(this.clock.now().getTime() / 1000);
    if (typeof payload.iat === 'number' && payload.iat > now + MAX_FUTURE_SECONDS) throw refused(`The client assertion's iat is more than ${MAX_FUTURE_SECONDS} seconds in the future`);
    const exp = payload.exp!;
    if (exp - now > this.config.assertionMaxLifetimeSeconds) throw refused(`The client assertion's exp must be at most ${this.config.assertionMaxLifetimeSeconds} seconds away`);
    const jti = payload.jti;
    if (typeof jti !== 'string' || jti.length === 0 || jti.length > MAX_JTI_LENGTH) throw refused(`The client assertion needs a jti of 1 to ${MAX_JTI_LENGTH} characters`);
    // RFC 7523 §3 item 7: a jti used once is refused, on every instance, until the assertion expires.
    if (!(await this.uses.use('client_assertion', client.id, jti, new Date((exp + CLOCK_TOLERANCE_SECONDS) * 1000)))) throw refused('This client assertion was already used');
    return client;
  }

  /** The client's pinned algorithm (under either of its names), else every asymmetric one; under FAPI 2.0 only the profile's (§5.4.1). */
  private algorithmsFor(client: Client): string[] {
    const allowed = client.tokenEndpointAuthSigningAlg ? namesOfAlgorithm(client.tokenEndpointAuthSigningAlg) : [...ASYMMETRIC_JWS_ALGORITHMS];
    return this.profiles.applies(client) ? allowed.filter((alg) => FAPI2_SIGNING_ALGORITHMS.has(alg)) : allowed;
  }

  private async verified(assertion: string, client: Client): Promise<{ exp?: number; iat?: number; jti?: unknown; aud?: string | string[] }> {
    const options = {
      issuer: client.id,
      subject: client.id,
      audience: this.app.issuer,
      algorithms: this.algorithmsFor(client),
      requiredClaims: ['exp', 'jti'],
      clockTolerance: CLOCK_TOLERANCE_SECONDS,
      currentDate: this.clock.now(),
    };
    try {
      try {
        return (await jwtVerify(assertion, await this.keys.keysOf(client), options)).payload;
      } catch (error) {
        // A kid the set lacks: the client may have rotated its keys; fetch its jwks_uri again (rate-limited) and retry once.
        if (!(error instanceof errors.JWKSNoMatchingKey) || client.jwksUri === null) throw error;
        return (await jwtVerify(assertion, await this.keys.keysOf(client, { refresh: true }), options)).payload;
      }
    } catch (error) {
      throw refused(assertionProblem(error));
    }
  }
}

function refused(description: string): InvalidClientAssertionError {
  return new InvalidClientAssertionError(description);
}

/** What was wrong, in words for the client; never the assertion itself. */
function assertionProblem(error: unknown): string {
  if (error instanceof ClientKeysUnavailable) return error.message;
  if (error instanceof errors.JWTExpired) return 'The client assertion has expired';
  if (error instanceof errors.JWTClaimValidationFailed) {
    const claim = error.claim === 'aud' ? 'aud must be the issuer' : `${error.claim} is missing or wrong`;
    return `The client assertion's ${claim}`;
  }
  if (error instanceof errors.JOSEAlgNotAllowed) return 'The client assertion is signed with an algorithm this client may not use';
  if (error instanceof errors.JWKSNoMatchingKey) return 'No registered key of this client matches the client assertion (kid, alg)';
  if (error instanceof errors.JWKSMultipleMatchingKeys) return 'Several registered keys match the client assertion; name one with kid';
  if (error instanceof errors.JWSSignatureVerificationFailed) return 'The client assertion\'s signature does not verify with the client\'s keys';
  return 'The client assertion is not a valid signed JWT (RFC 7523 §3)';
}
