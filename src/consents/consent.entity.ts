import { Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, UpdateDateColumn, type Relation } from 'typeorm';
import { Client } from '../clients/client.entity.js';
import { TIMESTAMP, UUID, UUID_LENGTH } from '../database/column-types.js';
import { User } from '../users/user.entity.js';

/** What a user has allowed a client: a later request for the same or a narrower scope skips the consent page. */
@Entity({ name: 'consents' })
@Index(['userId', 'clientId'], { unique: true })
@Index(['clientId'])
export class Consent {
  @PrimaryColumn({ type: UUID, length: UUID_LENGTH })
  id: string;

  @Column({ name: 'user_id', type: UUID, length: UUID_LENGTH })
  userId: string;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id' })
  user?: Relation<User>;

  @Column({ name: 'client_id', type: 'varchar', length: 64 })
  clientId: string;

  @ManyToOne(() => Client, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'client_id' })
  client?: Relation<Client>;

  /** Space-separated union of every scope the user has granted this client. */
  @Column({ type: 'text' })
  scope: string;

  @CreateDateColumn({ name: 'created_at', type: TIMESTAMP })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: TIMESTAMP })
  updatedAt: Date;
}
