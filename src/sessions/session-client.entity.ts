import { CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';
import { Client } from '../clients/client.entity.js';
import { TIMESTAMP } from '../database/column-types.js';
import { Session } from './session.entity.js';

/**
 * That a client signed the person in through this session (an OpenID Connect authorization): who
 * to notify when the session ends (Back-Channel Logout 1.0 §2.7). Goes with the session or the client.
 */
@Entity({ name: 'session_clients' })
export class SessionClient {
  @PrimaryColumn({ name: 'session_id', type: 'varchar', length: 64 })
  sessionId: string;

  /** Indexed on its own: the primary key leads with session_id, and a client's sessions are listed and counted (the admin API). */
  @Index('IDX_session_clients_client_id')
  @PrimaryColumn({ name: 'client_id', type: 'varchar', length: 64 })
  clientId: string;

  @ManyToOne(() => Session, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'session_id' })
  session?: Relation<Session>;

  @ManyToOne(() => Client, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'client_id' })
  client?: Relation<Client>;

  @CreateDateColumn({ name: 'created_at', type: TIMESTAMP })
  createdAt: Date;
}
