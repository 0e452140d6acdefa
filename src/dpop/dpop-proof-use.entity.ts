import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { TIMESTAMP } from '../database/column-types.js';

/**
 * A DPoP proof that has been accepted once (RFC 9449 §11.1): the SHA-256 of its key's thumbprint
 * and its jti. The primary key makes the database refuse a second use, whichever instance the
 * replay reaches. Kept until the proof's iat has left the accepted window, then purged.
 */
@Entity({ name: 'dpop_proof_uses' })
export class DpopProofUse {
  @PrimaryColumn({ name: 'proof_hash', type: 'varchar', length: 64 })
  proofHash: string;

  @Index()
  @Column({ name: 'expires_at', type: TIMESTAMP })
  expiresAt: Date;
}
