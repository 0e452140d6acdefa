import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { TIMESTAMP, UUID, UUID_LENGTH } from '../database/column-types.js';

/** What a challenge was issued for: it answers only that ceremony. */
export const CEREMONY = { registration: 'registration', authentication: 'authentication' } as const;
export type Ceremony = (typeof CEREMONY)[keyof typeof CEREMONY];

/**
 * A WebAuthn challenge waiting for its response (WebAuthn Level 3 §13.4.3): in the database, so a
 * response may reach any instance, and deleted by the one response that uses it (a conditional
 * DELETE), so neither a replayed response nor a copied cookie can use it twice. The browser's
 * session cookie names the row; the row names the person it was issued to (registration).
 */
@Entity({ name: 'passkey_challenges' })
export class PasskeyChallenge {
  @PrimaryColumn({ type: UUID, length: UUID_LENGTH })
  id: string;

  /** The challenge sent to the browser (base64url of 32 random bytes). */
  @Column({ type: 'varchar', length: 128 })
  challenge: string;

  @Column({ type: 'varchar', length: 16 })
  ceremony: Ceremony;

  /** The person adding a passkey; null for a sign-in, where nobody is known yet. */
  @Column({ name: 'user_id', type: UUID, length: UUID_LENGTH, nullable: true })
  userId: string | null;

  @Index()
  @Column({ name: 'expires_at', type: TIMESTAMP })
  expiresAt: Date;
}
