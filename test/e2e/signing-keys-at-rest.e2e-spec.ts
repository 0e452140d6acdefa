/**
 * The ID-token signing keys at rest (OpenID Connect Core §10.1; RFC 7517 §5; RFC 6819 §5.1.4.1.3):
 * a fresh database gets one key per algorithm; the private halves are stored sealed with
 * SIGNING_KEY_ENCRYPTION_KEY (AES-256-GCM, bound to the row's kid), the public halves carry no
 * private member, and a restart loads the same keys instead of generating new ones.
 */
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { getDataSourceToken } from '@nestjs/typeorm';
import { calculateJwkThumbprint, type JWK } from 'jose';
import { createPrivateKey, createPublicKey, randomBytes, type JsonWebKey } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { createApp } from '../../src/app.setup.js';
import { SealedBox } from '../../src/common/sealed-box.js';
import { NoSigningKeyError, SigningKeyRing } from '../../src/signing/signing-key-ring.js';
import { SigningKey } from '../../src/signing/signing-key.entity.js';
import { createTestDatabase, dropTestDatabase } from '../helpers/test-database.js';

interface SigningKeyRow {
  kid: string;
  alg: string;
  generation: number;
  public_jwk: string;
  private_jwk: string;
  published_until: unknown;
}

const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];
/** The members that make up each key type's public key (RFC 7518 §6.2.1, §6.3.1; RFC 8037 §2). */
const PUBLIC_MEMBERS: Record<string, string[]> = { RSA: ['kty', 'n', 'e'], EC: ['kty', 'crv', 'x', 'y'], OKP: ['kty', 'crv', 'x'] };

const pick = (jwk: Record<string, unknown>, names: string[]): Record<string, unknown> => Object.fromEntries(names.map((name) => [name, jwk[name]]));

describe('signing keys at rest', () => {
  const encryptionKey = randomBytes(32);
  const box = new SealedBox('signing-key-encryption', [encryptionKey]);
  let rows: SigningKeyRow[];
  let jwks: { keys: JWK[] };

  /** The real app on this file's database (kept between starts), listening on loopback. */
  async function start(): Promise<{ nest: NestFastifyApplication; dataSource: DataSource; baseUrl: string }> {
    const nest = await createApp({ level: 'error' });
    await nest.listen(0, '127.0.0.1');
    await nest.getHttpAdapter().getInstance().ready();
    const { port } = nest.getHttpServer().address() as { port: number };
    return { nest, dataSource: nest.get<DataSource>(getDataSourceToken()), baseUrl: `http://127.0.0.1:${port}` };
  }

  const readRows = (dataSource: DataSource): Promise<SigningKeyRow[]> => dataSource.createQueryBuilder().select('*').from('signing_keys', 'k').orderBy('k.alg').getRawMany<SigningKeyRow>();
  const fetchJwks = async (baseUrl: string): Promise<{ keys: JWK[] }> => (await (await fetch(`${baseUrl}/.well-known/jwks.json`)).json()) as { keys: JWK[] };

  beforeAll(async () => {
    process.env.SIGNING_KEY_ENCRYPTION_KEY = encryptionKey.toString('base64');
    await createTestDatabase();
    const { nest, dataSource, baseUrl } = await start();
    try {
      rows = await readRows(dataSource);
      jwks = await fetchJwks(baseUrl);
      // The configured key seals them: no key was generated into server_keys for the purpose.
      expect(await dataSource.createQueryBuilder().select('*').from('server_keys', 's').where('s.name = :name', { name: 'signing-key-encryption' }).getRawMany()).toEqual([]);
    } finally {
      await nest.close();
    }
  });
  afterAll(async () => {
    delete process.env.SIGNING_KEY_ENCRYPTION_KEY;
    await dropTestDatabase();
  });

  it('a fresh database gets one key per algorithm, generation 1, published with no end', () => {
    expect(rows.map((row) => [row.alg, Number(row.generation), row.published_until])).toEqual([
      ['ES256', 1, null],
      ['EdDSA', 1, null],
      ['RS256', 1, null],
    ]);
  });

  it('names each key by the JWK thumbprint of its public half (RFC 7638)', async () => {
    for (const row of rows) expect(await calculateJwkThumbprint(JSON.parse(row.public_jwk) as JWK, 'sha256')).toBe(row.kid);
  });

  it('stores the public half as a public JWK for signatures: no private member', () => {
    for (const row of rows) {
      const jwk = JSON.parse(row.public_jwk) as Record<string, unknown>;
      expect(jwk).toMatchObject({ kid: row.kid, alg: row.alg, use: 'sig' });
      for (const member of PRIVATE_MEMBERS) expect([row.alg, member, jwk[member]]).toEqual([row.alg, member, undefined]);
    }
  });

  it('publishes exactly the stored public halves at jwks_uri', () => {
    expect([...jwks.keys].sort((a, b) => String(a.kid).localeCompare(String(b.kid)))).toEqual(rows.map((row) => JSON.parse(row.public_jwk) as JWK).sort((a, b) => String(a.kid).localeCompare(String(b.kid))));
  });

  it('stores the private half sealed: v1 format, not JSON, holding neither the public values nor the private ones in clear', () => {
    for (const row of rows) {
      expect(row.private_jwk).toMatch(/^v1\.[A-Za-z0-9_-]{8}\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
      expect(() => JSON.parse(row.private_jwk) as unknown).toThrow();
      const publicJwk = JSON.parse(row.public_jwk) as Record<string, string>;
      for (const member of ['n', 'x', 'y']) if (publicJwk[member]) expect(row.private_jwk).not.toContain(publicJwk[member].slice(0, 16));
      const opened = JSON.parse(box.open(row.private_jwk, row.kid)!) as Record<string, string>;
      expect(row.private_jwk).not.toContain(opened.d.slice(0, 16));
    }
  });

  it('opens with SIGNING_KEY_ENCRYPTION_KEY into the private key whose public half is the published one', () => {
    for (const row of rows) {
      const opened = box.open(row.private_jwk, row.kid);
      expect(opened).toBeDefined();
      const privateJwk = JSON.parse(opened!) as Record<string, unknown>;
      const publicJwk = JSON.parse(row.public_jwk) as Record<string, unknown>;
      const members = PUBLIC_MEMBERS[String(publicJwk.kty)];
      expect(privateJwk.d).toEqual(expect.any(String));
      expect(pick(privateJwk, members)).toEqual(pick(publicJwk, members));
      // d itself belongs to that public key: the public key derived from the private one is the published one.
      const derived = createPublicKey(createPrivateKey({ key: privateJwk as JsonWebKey, format: 'jwk' })).export({ format: 'jwk' }) as Record<string, unknown>;
      expect(pick(derived, members)).toEqual(pick(publicJwk, members));
    }
  });

  it("is bound to its kid: a private half does not open for another row's kid, nor with another encryption key", () => {
    for (const row of rows) {
      for (const other of rows.filter((r) => r.kid !== row.kid)) expect(box.open(row.private_jwk, other.kid)).toBeUndefined();
      expect(new SealedBox('signing-key-encryption', [randomBytes(32)]).open(row.private_jwk, row.kid)).toBeUndefined();
    }
  });

  describe('restarting on the same database', () => {
    let again: SigningKeyRow[];
    let jwksAgain: { keys: JWK[] };
    let ring: { es256: unknown; rs256: unknown };

    beforeAll(async () => {
      const second = await start();
      try {
        again = await readRows(second.dataSource);
        jwksAgain = await fetchJwks(second.baseUrl);
        // Then move the RS256 key's sealed private half onto the ES256 row, as an attacker with write access might.
        const [rs256, es256] = ['RS256', 'ES256'].map((alg) => rows.find((row) => row.alg === alg)!);
        await second.dataSource.getRepository(SigningKey).update({ kid: es256.kid }, { privateJwk: rs256.private_jwk });
      } finally {
        await second.nest.close();
      }
      const third = await start();
      try {
        const keys = third.nest.get(SigningKeyRing);
        const attempt = (alg: 'RS256' | 'ES256'): unknown => {
          try {
            return keys.signer(alg).kid;
          } catch (error) {
            return error;
          }
        };
        ring = { rs256: attempt('RS256'), es256: attempt('ES256') };
      } finally {
        await third.nest.close();
      }
    });

    it('generates no new keys: the same kids, sealed values and JWKS', () => {
      expect(again).toEqual(rows);
      expect(jwksAgain).toEqual(jwks);
    });

    it('a private half moved onto another row does not open there: that key never signs, the others still do', () => {
      expect(ring.rs256).toBe(rows.find((row) => row.alg === 'RS256')!.kid);
      expect(ring.es256).toBeInstanceOf(NoSigningKeyError);
      expect((ring.es256 as Error).message).toMatch(/No usable ES256 signing key/);
    });
  });
});
