/** Protocol names, spelled as the RFCs spell them on the wire. */

export const GrantType = {
  AuthorizationCode: 'authorization_code',
  RefreshToken: 'refresh_token',
  ClientCredentials: 'client_credentials',
  /** RFC 6749 §4.2; only for clients an administrator opts in (RFC 9700 §2.1.2). */
  Implicit: 'implicit',
  /** RFC 6749 §4.3; only for confidential clients an administrator opts in (RFC 9700 §2.4). */
  Password: 'password',
  /** RFC 8693 §2.1; only for confidential clients an administrator registers for it. */
  TokenExchange: 'urn:ietf:params:oauth:grant-type:token-exchange',
  /** RFC 8628 §3.4: a device without a browser polls with its device_code while the person approves elsewhere. */
  DeviceCode: 'urn:ietf:params:oauth:grant-type:device_code',
} as const;
export type GrantType = (typeof GrantType)[keyof typeof GrantType];

/** RFC 8693 §3: the token type identifiers Latchkey accepts and issues in a token exchange (access tokens only). */
export const ExchangeTokenType = { AccessToken: 'urn:ietf:params:oauth:token-type:access_token' } as const;
export type ExchangeTokenType = (typeof ExchangeTokenType)[keyof typeof ExchangeTokenType];

/**
 * Grants a client can be given only by an administrator (the CLI, or a clients:register token):
 * the legacy ones, and token exchange, which lets a client obtain tokens for other services.
 */
export const ADMINISTRATOR_GRANT_TYPES: readonly GrantType[] = [GrantType.Implicit, GrantType.Password, GrantType.TokenExchange];

/**
 * RFC 6749 §3.1.1; `token` (implicit) and OpenID Connect's `id_token` (Core §3.2.2.1: an ID token
 * and no access token) only for clients registered for the implicit grant.
 */
export const ResponseType = { Code: 'code', Token: 'token', IdToken: 'id_token' } as const;
export type ResponseType = (typeof ResponseType)[keyof typeof ResponseType];

/** The spec's two access token types: RFC 6750 bearer tokens and MAC tokens (draft-ietf-oauth-v2-http-mac). */
export const TokenType = { Bearer: 'bearer', Mac: 'mac' } as const;
export type TokenType = (typeof TokenType)[keyof typeof TokenType];

/**
 * RFC 9449 §5, §7.1: the token type of a DPoP-bound access token and the scheme it is presented
 * with. Not a registrable access_token_type: a client asks for it with a proof (or must, with
 * dpop_bound_access_tokens).
 */
export const DPOP_SCHEME = 'DPoP';

/** draft-ietf-oauth-v2-http-mac-02 §5.1: the one MAC algorithm Latchkey issues keys for. */
export const MacAlgorithm = { HmacSha256: 'hmac-sha-256' } as const;
export type MacAlgorithm = (typeof MacAlgorithm)[keyof typeof MacAlgorithm];

/** RFC 7636 §4.2. `plain` is deliberately absent: RFC 9700 §2.1.1 asks for S256. */
export const CodeChallengeMethod = { S256: 'S256' } as const;
export type CodeChallengeMethod = (typeof CodeChallengeMethod)[keyof typeof CodeChallengeMethod];

/** RFC 6749 §2.3, RFC 7591 §2 and OpenID Connect Core §9 names. */
export const ClientAuthMethod = {
  ClientSecretBasic: 'client_secret_basic',
  ClientSecretPost: 'client_secret_post',
  /** RFC 7523 §2.2: a JWT the client signs with a private key whose public half it registered. */
  PrivateKeyJwt: 'private_key_jwt',
  None: 'none',
} as const;
export type ClientAuthMethod = (typeof ClientAuthMethod)[keyof typeof ClientAuthMethod];

/** RFC 7523 §2.2: the client_assertion_type of a JWT client assertion. */
export const JWT_BEARER_ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

/**
 * RFC 6749 §4.1.2 (code: query) and §4.2.2 (token: fragment), and OAuth 2.0 Form Post Response
 * Mode (form_post: the parameters posted to the redirect URI by an auto-submitting form).
 */
export const ResponseMode = { Query: 'query', Fragment: 'fragment', FormPost: 'form_post' } as const;
export type ResponseMode = (typeof ResponseMode)[keyof typeof ResponseMode];

/** Grants that RFC 9700 advises against: never a default, only by an administrator's explicit choice. */
export const LEGACY_GRANT_TYPES: readonly GrantType[] = [GrantType.Implicit, GrantType.Password];

/** Passport strategy names. */
export const Strategy = {
  /** client_secret_basic (RFC 6749 §2.3.1), through passport-http. */
  ClientBasic: 'client-basic',
  /** client_secret_post (RFC 6749 §2.3.1): the secret in the form body. */
  ClientSecretPost: 'client-secret-post',
  /** none (RFC 7591 §2): a public client naming itself; PKCE proves possession instead. */
  ClientNone: 'client-none',
  /** private_key_jwt (RFC 7523 §2.2, Core §9): a signed client assertion in the form body. */
  ClientPrivateKeyJwt: 'client-private-key-jwt',
  Bearer: 'bearer',
} as const;
