/**
 * A software WebAuthn authenticator for e2e tests: a P-256 key from node:crypto, authenticator data
 * built byte by byte (WebAuthn Level 3 §6.1), a `none` attestation in CBOR (RFC 8949, the few types
 * it needs) and ES256 assertions over authenticatorData || SHA-256(clientDataJSON) (§6.3.3). Every
 * flag, counter and the origin can be set per call, to produce the responses a server must refuse.
 */
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';

type Cbor = number | string | Uint8Array | Map<Cbor, Cbor>;

/** A CBOR item's head: the major type and the argument (RFC 8949 §3). */
function head(major: number, argument: number): Buffer {
  if (argument < 24) return Buffer.from([(major << 5) | argument]);
  if (argument < 0x100) return Buffer.from([(major << 5) | 24, argument]);
  if (argument < 0x10000) return Buffer.from([(major << 5) | 25, argument >> 8, argument & 0xff]);
  const bytes = Buffer.alloc(5);
  bytes[0] = (major << 5) | 26;
  bytes.writeUInt32BE(argument, 1);
  return bytes;
}

export function cbor(value: Cbor): Buffer {
  if (typeof value === 'number') return value >= 0 ? head(0, value) : head(1, -1 - value);
  if (typeof value === 'string') {
    const text = Buffer.from(value, 'utf8');
    return Buffer.concat([head(3, text.length), text]);
  }
  if (value instanceof Uint8Array) return Buffer.concat([head(2, value.length), value]);
  return Buffer.concat([head(5, value.size), ...[...value].flatMap(([k, v]) => [cbor(k), cbor(v)])]);
}

const FLAG = { UP: 0x01, UV: 0x04, BE: 0x08, BS: 0x10, AT: 0x40 } as const;

const b64u = (bytes: Uint8Array | string): string => Buffer.from(bytes).toString('base64url');
const sha256 = (data: Uint8Array | string): Buffer => createHash('sha256').update(data).digest();

export interface CeremonyOverrides {
  /** The origin written into clientDataJSON (default: the authenticator's). */
  origin?: string;
  /** The UV flag (default: set). */
  userVerified?: boolean;
  /** The signature counter to report (default: one more than the last). */
  counter?: number;
  /** The challenge to answer instead of the options' one. */
  challenge?: string;
}

type JsonObject = Record<string, unknown>;

export class SoftAuthenticator {
  readonly credentialId = randomBytes(16);
  private readonly privateKey: KeyObject;
  private readonly publicKey: KeyObject;
  private counter = 0;
  private userHandle?: string;

  constructor(
    private readonly rpId: string,
    private readonly origin: string,
    private readonly options: { backupEligible?: boolean; countsSignatures?: boolean } = {},
  ) {
    ({ privateKey: this.privateKey, publicKey: this.publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' }));
  }

  /** A copy holding the same key and counter: a cloned authenticator. */
  clone(): SoftAuthenticator {
    const copy = Object.create(SoftAuthenticator.prototype) as SoftAuthenticator;
    Object.assign(copy, this);
    return copy;
  }

  get credentialIdBase64url(): string {
    return b64u(this.credentialId);
  }

  /** navigator.credentials.create() answered: a RegistrationResponseJSON for `creationOptions`. */
  register(creationOptions: JsonObject, overrides: CeremonyOverrides = {}): JsonObject {
    this.userHandle = (creationOptions.user as { id: string }).id;
    const clientDataJSON = this.clientData('webauthn.create', overrides.challenge ?? (creationOptions.challenge as string), overrides.origin);
    const jwk = this.publicKey.export({ format: 'jwk' });
    // COSE_Key (RFC 9053 §7.1): kty EC2, alg ES256, crv P-256, x, y.
    const coseKey = cbor(new Map<Cbor, Cbor>([[1, 2], [3, -7], [-1, 1], [-2, Buffer.from(jwk.x!, 'base64url')], [-3, Buffer.from(jwk.y!, 'base64url')]]));
    const idLength = Buffer.alloc(2);
    idLength.writeUInt16BE(this.credentialId.length);
    const attested = Buffer.concat([Buffer.alloc(16), idLength, this.credentialId, coseKey]);
    const authData = this.authenticatorData(overrides, FLAG.AT, attested, overrides.counter ?? 0);
    const attestationObject = cbor(new Map<Cbor, Cbor>([['fmt', 'none'], ['attStmt', new Map()], ['authData', authData]]));
    return {
      id: this.credentialIdBase64url,
      rawId: this.credentialIdBase64url,
      type: 'public-key',
      response: { clientDataJSON: b64u(clientDataJSON), attestationObject: b64u(attestationObject), transports: ['internal'] },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    };
  }

  /** navigator.credentials.get() answered: an AuthenticationResponseJSON for `requestOptions`. */
  assert(requestOptions: JsonObject, overrides: CeremonyOverrides = {}): JsonObject {
    const counter = overrides.counter ?? (this.options.countsSignatures === false ? 0 : this.counter + 1);
    this.counter = Math.max(this.counter, counter);
    const clientDataJSON = this.clientData('webauthn.get', overrides.challenge ?? (requestOptions.challenge as string), overrides.origin);
    const authData = this.authenticatorData(overrides, 0, Buffer.alloc(0), counter);
    const signature = sign('sha256', Buffer.concat([authData, sha256(clientDataJSON)]), this.privateKey);
    return {
      id: this.credentialIdBase64url,
      rawId: this.credentialIdBase64url,
      type: 'public-key',
      response: { clientDataJSON: b64u(clientDataJSON), authenticatorData: b64u(authData), signature: b64u(signature), userHandle: this.userHandle },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    };
  }

  private clientData(type: string, challenge: string, origin = this.origin): Buffer {
    return Buffer.from(JSON.stringify({ type, challenge, origin, crossOrigin: false }), 'utf8');
  }

  private authenticatorData(overrides: CeremonyOverrides, extraFlags: number, rest: Buffer, counter: number): Buffer {
    let flags = FLAG.UP | extraFlags;
    if (overrides.userVerified !== false) flags |= FLAG.UV;
    if (this.options.backupEligible) flags |= FLAG.BE | FLAG.BS;
    const signCount = Buffer.alloc(4);
    signCount.writeUInt32BE(counter);
    return Buffer.concat([sha256(this.rpId), Buffer.from([flags]), signCount, rest]);
  }
}
