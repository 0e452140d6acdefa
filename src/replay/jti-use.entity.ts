import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { TIMESTAMP } from '../database/column-types.js';

/**
 * A single-use JWT that has been accepted once: a DPoP proof (RFC 9449 §11.1) or a client
 * assertion (RFC 7523 §3 item 7), as the SHA-256 of its kind, its signer and its jti. The primary
 * key makes the database refuse a second use, whichever instance the replay reaches. Kept until
 * the JWT could no longer be accepted anyway, then purged.
 */
@Entity({ name: 'jti_uses' })
export class JtiUse {
  @PrimaryColumn({ name: 'use_hash', type: 'varchar', length: 64 })
  useHash: string;

  @Index()
  @Column({ name: 'expires_at', type: TIMESTAMP })
  expiresAt: Date;
}
