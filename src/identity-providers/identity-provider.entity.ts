import { Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';
import { JSON_DOCUMENT, TIMESTAMP } from '../database/column-types.js';
import type { UpstreamProtocol } from './identity-provider-settings.js';

/**
 * An upstream identity provider an administrator configured (idps:create): the company's OpenID
 * Connect provider or SAML 2.0 identity provider, through which people sign in here. Secrets are
 * never in this row: the settings name where they are (an environment variable or a file).
 */
@Entity({ name: 'identity_providers' })
export class IdentityProvider {
  /** A short name chosen by the administrator ("contoso"): in URLs, idp_hint and upstream links. */
  @PrimaryColumn({ type: 'varchar', length: 64 })
  id: string;

  /** What the sign-in page's button says after "Sign in with". */
  @Column({ name: 'display_name', type: 'varchar', length: 100 })
  displayName: string;

  @Column({ type: 'varchar', length: 8 })
  protocol: UpstreamProtocol;

  /** A disabled provider is neither offered nor accepted; its people keep their links. */
  @Column({ type: 'boolean', default: true })
  enabled: boolean;

  /** IdentityProviderSettings without id, name and protocol, as validated by parseSettings. */
  @Column({ type: JSON_DOCUMENT })
  settings: Record<string, unknown>;

  @CreateDateColumn({ name: 'created_at', type: TIMESTAMP })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: TIMESTAMP })
  updatedAt: Date;
}
