import { DEFAULT_OPENID_SETTINGS, type OpenIdClientSettings } from './openid-client-settings.js';
import { Column, CreateDateColumn, Entity, Index, PrimaryColumn, UpdateDateColumn } from 'typeorm';
import type { AsymmetricJwsAlgorithm } from '../common/asymmetric-algorithms.js';
import type { Acr } from '../common/authentication-context.js';
import { ClientAuthMethod, TokenType, type GrantType, type ResponseType } from '../common/oauth.constants.js';
import type { ClientJwks } from './client-keys.js';
import { TIMESTAMP } from '../database/column-types.js';

/** A registered OAuth client (RFC 6749 §2). Field names follow RFC 7591 on the wire. */
/** A client's sign-in restriction (Client.signInRule). */
export interface ClientSignInRule {
  identityProviders: string[] | null;
  localSignIn: boolean;
}

/** What a client receives in its `groups` claim (issue 46, `clients:groups --claim`): nothing (the default), the groups' names, or their ids. */
export const GroupsClaimSetting = { None: 'none', Names: 'names', Ids: 'ids' } as const;
export type GroupsClaimSetting = (typeof GroupsClaimSetting)[keyof typeof GroupsClaimSetting];

@Entity({ name: 'clients' })
export class Client {
  @PrimaryColumn({ name: 'id', type: 'varchar', length: 64 })
  id: string;

  @Column({ type: 'varchar', length: 200 })
  name: string;

  /** SHA-256 of the client secret; null for public clients (RFC 6749 §2.1). */
  @Column({ name: 'secret_hash', type: 'varchar', length: 64, nullable: true })
  secretHash: string | null;

  @Column({ name: 'redirect_uris', type: 'simple-json' })
  redirectUris: string[];

  /** Space-separated scopes this client may request; also the default when a request names none. */
  @Column({ type: 'text', default: '' })
  scope: string;

  @Column({ name: 'grant_types', type: 'simple-json' })
  grantTypes: GrantType[];

  /**
   * RFC 7591 §2 response_types as registered, when registered: `id_token` (Core §3.2.2.1) only
   * so, beside the implicit grant (issue 37). Null: those the grant types imply (responseTypesOf).
   */
  @Column({ name: 'response_types', type: 'simple-json', nullable: true })
  responseTypes: ResponseType[] | null;

  /**
   * SHA-256 of the registration access token (RFC 7592 §1) of a client registered over HTTP;
   * null for clients registered with the CLI. One indexed lookup per management request.
   */
  @Index({ unique: true })
  @Column({ name: 'registration_token_hash', type: 'varchar', length: 64, nullable: true })
  registrationTokenHash: string | null;

  @Column({ name: 'token_endpoint_auth_method', type: 'varchar', length: 32 })
  tokenEndpointAuthMethod: ClientAuthMethod;

  /** The type of access token this client receives: bearer (the default) or mac (RFC 7591 metadata `access_token_type`, a Latchkey extension). */
  @Column({ name: 'access_token_type', type: 'varchar', length: 16, default: TokenType.Bearer })
  accessTokenType: TokenType;

  /**
   * Descriptive metadata (RFC 7591 §2): the client's home page, logo, privacy policy and terms of
   * service, https URLs shown to the person on the consent page. Changing them widens nothing, so a
   * client managing itself may (client-change-policy.ts).
   */
  @Column({ name: 'client_uri', type: 'varchar', length: 2000, nullable: true })
  clientUri: string | null;

  @Column({ name: 'logo_uri', type: 'varchar', length: 2000, nullable: true })
  logoUri: string | null;

  @Column({ name: 'policy_uri', type: 'varchar', length: 2000, nullable: true })
  policyUri: string | null;

  @Column({ name: 'tos_uri', type: 'varchar', length: 2000, nullable: true })
  tosUri: string | null;

  /**
   * A private_key_jwt client's public keys (RFC 7591 §2 jwks), or the https URL that serves them
   * (jwks_uri): exactly one of the two; both null for other clients (client-keys.ts).
   */
  @Column({ type: 'simple-json', nullable: true })
  jwks: ClientJwks | null;

  @Column({ name: 'jwks_uri', type: 'varchar', length: 2000, nullable: true })
  jwksUri: string | null;

  /** The one algorithm its assertions must use (OpenID Dynamic Registration §2); null: any we support. */
  @Column({ name: 'token_endpoint_auth_signing_alg', type: 'varchar', length: 16, nullable: true })
  tokenEndpointAuthSigningAlg: AsymmetricJwsAlgorithm | null;

  /** OpenID Connect settings (openid-client-settings.ts); null: every default. */
  @Column({ name: 'openid_settings', type: 'simple-json', nullable: true })
  openIdSettings: OpenIdClientSettings | null;

  /**
   * The weakest sign-in level (authentication-context.ts) any request of this client gets: a floor
   * that acr_values may raise, never lower (requiredAcr), unlike default_acr_values, which a request
   * replaces. `clients:create --require-mfa` sets the second-factor one. Registration metadata
   * `minimum_acr`, a Latchkey extension; null: no floor.
   */
  @Column({ name: 'minimum_acr', type: 'varchar', length: 64, nullable: true })
  minimumAcr: Acr | null;

  /**
   * How the client's people may sign in, when an administrator restricted it (clients:sign-in,
   * issue 45): only through these upstream identity providers (null: any enabled one), and whether
   * a local sign-in (password, passkey) is allowed. Null: every way. Kept on the client, so the
   * authentication policy reads it with the client, from the instance's cache.
   */
  @Column({ name: 'sign_in_rule', type: 'simple-json', nullable: true })
  signInRule: ClientSignInRule | null;

  /** Issue 46: the `groups` claim in this client's ID tokens, userinfo, introspection and JWT access tokens (src/groups/groups-claim.ts). */
  @Column({ name: 'groups_claim', type: 'varchar', length: 8, default: GroupsClaimSetting.None })
  groupsClaim: GroupsClaimSetting;

  /**
   * Issue 46: the ids of the groups whose (effective) members alone may sign in to this client and
   * refresh its tokens (src/groups/group-access-rule.ts); null: anyone. Kept on the client, so the
   * authentication policy reads it with the client, from the instance's cache.
   */
  @Column({ name: 'required_groups', type: 'simple-json', nullable: true })
  requiredGroups: string[] | null;

  @CreateDateColumn({ name: 'created_at', type: TIMESTAMP })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: TIMESTAMP })
  updatedAt: Date;

  /** RFC 6749 §2.1: a client that cannot authenticate (none); a private_key_jwt client has no secret yet is confidential. */
  get isPublic(): boolean {
    return this.tokenEndpointAuthMethod === ClientAuthMethod.None;
  }

  get openId(): OpenIdClientSettings {
    return this.openIdSettings ?? DEFAULT_OPENID_SETTINGS;
  }
}
