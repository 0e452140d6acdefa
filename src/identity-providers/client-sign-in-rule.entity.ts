import { Column, Entity, JoinColumn, OneToOne, PrimaryColumn, type Relation } from 'typeorm';
import { Client } from '../clients/client.entity.js';

/**
 * How people may sign in to one client (issue 45), when an administrator restricted it
 * (clients:sign-in): only through some upstream identity providers, or only upstream. A client
 * without a row allows every enabled provider and the local sign-in. Enforced by the
 * authentication policy: a session made another way signs in again.
 */
@Entity({ name: 'client_sign_in_rules' })
export class ClientSignInRule {
  @PrimaryColumn({ name: 'client_id', type: 'varchar', length: 64 })
  clientId: string;

  /** Deleting the client deletes its rule. */
  @OneToOne(() => Client, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'client_id' })
  client?: Relation<Client>;

  /** The identity providers allowed; null: every enabled one. */
  @Column({ name: 'identity_providers', type: 'simple-json', nullable: true })
  identityProviders: string[] | null;

  /** Whether a local sign-in (password, passkey) is allowed. */
  @Column({ name: 'local_sign_in', type: 'boolean', default: true })
  localSignIn: boolean;
}
