import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { TIMESTAMP } from '../../database/column-types.js';

/**
 * A SAML response that passed every check at our ACS, waiting for the browser to come back to
 * /federation/<idp>/saml/complete. The ACS is a cross-site POST, which carries no SameSite=Lax
 * cookie; the GET it redirects to does, and there the answer is bound to the browser that asked
 * (its InResponseTo against the request ID in the cookie). In the database, so the GET may reach
 * any instance; taken once by a conditional DELETE; kept for two minutes at most.
 */
@Entity({ name: 'saml_handoffs' })
export class SamlHandoff {
  /** SHA-256 (hex) of the handle in the redirect's query: the handle itself is never stored. */
  @PrimaryColumn({ name: 'handle_hash', type: 'varchar', length: 64 })
  handleHash: string;

  @Column({ name: 'idp_id', type: 'varchar', length: 64 })
  idpId: string;

  /** The ID of our AuthnRequest that the signed assertion answers. */
  @Column({ name: 'in_response_to', type: 'varchar', length: 255 })
  inResponseTo: string;

  /** The verified UpstreamIdentity, as JSON. */
  @Column({ type: 'text' })
  identity: string;

  @Index()
  @Column({ name: 'expires_at', type: TIMESTAMP })
  expiresAt: Date;
}
