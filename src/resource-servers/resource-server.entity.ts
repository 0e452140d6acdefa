import { Column, CreateDateColumn, Entity, Index, PrimaryColumn } from 'typeorm';
import { TIMESTAMP, UUID, UUID_LENGTH } from '../database/column-types.js';

/** How a resource server wants its access tokens: opaque (looked up, revocable) or JWT (RFC 9068, checked offline). */
export const AccessTokenFormat = { Opaque: 'opaque', Jwt: 'jwt' } as const;
export type AccessTokenFormat = (typeof AccessTokenFormat)[keyof typeof AccessTokenFormat];

/**
 * A resource server clients may ask tokens for with a resource indicator (RFC 8707 §2): its URI is
 * the indicator and the audience of those tokens. Registered by an administrator. Latchkey's own
 * APIs are a resource too, named by the issuer, and need no row.
 */
@Entity({ name: 'resource_servers' })
export class ResourceServer {
  @PrimaryColumn({ type: UUID, length: UUID_LENGTH })
  id: string;

  /** RFC 8707 §2: an absolute URI without a fragment, compared as a string. */
  @Index({ unique: true })
  @Column({ type: 'varchar', length: 2000 })
  uri: string;

  @Column({ type: 'varchar', length: 200 })
  name: string;

  @Column({ name: 'access_token_format', type: 'varchar', length: 16, default: AccessTokenFormat.Opaque })
  accessTokenFormat: AccessTokenFormat;

  /**
   * The client this resource server introspects with (RFC 7662 §2.2, §4): the only one to which
   * tokens restricted to it are `active`. Null: nobody introspects its tokens (it takes JWTs, or
   * none yet). No foreign key: a deleted client cannot authenticate, and ids are never reused.
   */
  @Column({ name: 'introspection_client_id', type: 'varchar', length: 64, nullable: true })
  introspectionClientId: string | null;

  @CreateDateColumn({ name: 'created_at', type: TIMESTAMP })
  createdAt: Date;
}
