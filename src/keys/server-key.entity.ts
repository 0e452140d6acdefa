import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';
import { TIMESTAMP } from '../database/column-types.js';

/**
 * Keys the server generates for itself when none is configured (the session cookie key), kept in
 * the database so that every instance behind the load balancer uses the same one.
 */
@Entity({ name: 'server_keys' })
export class ServerKey {
  @PrimaryColumn({ type: 'varchar', length: 64 })
  name: string;

  /** base64 key material. */
  @Column({ type: 'text' })
  value: string;

  @CreateDateColumn({ name: 'created_at', type: TIMESTAMP })
  createdAt: Date;
}
