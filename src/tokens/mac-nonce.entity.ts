import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';
import { TIMESTAMP, UUID, UUID_LENGTH } from '../database/column-types.js';
import { Token } from './token.entity.js';

/**
 * A (token, nonce, ts) triple a MAC-signed request has used (draft-ietf-oauth-v2-http-mac-02
 * §4.1). The primary key makes the database refuse a second use, so a replay is caught whichever
 * instance receives it. Kept until its timestamp has left the accepted window, then purged.
 */
@Entity({ name: 'mac_nonces' })
export class MacNonce {
  @PrimaryColumn({ name: 'token_id', type: UUID, length: UUID_LENGTH })
  tokenId: string;

  @PrimaryColumn({ type: 'varchar', length: 128 })
  nonce: string;

  @PrimaryColumn({ type: 'bigint' })
  ts: string;

  @ManyToOne(() => Token, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'token_id' })
  token?: Relation<Token>;

  @Index()
  @Column({ name: 'expires_at', type: TIMESTAMP })
  expiresAt: Date;
}
