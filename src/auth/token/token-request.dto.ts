import { IsOptional, IsString, Matches, MaxLength } from 'class-validator';

const MAX = 'The $property parameter is too long';

/**
 * The form parameters of POST /token (RFC 6749 §4.1.3, §4.3.2, §6; RFC 7636 §4.5). Every field is
 * optional here: which ones a request needs depends on its grant, and the grant handler says so.
 * Empty values count as absent (RFC 6749 §3.1).
 */
export class TokenRequestDto {
  /** RFC 8707 §2: resource may appear several times; ResourceIndicators checks each value. */
  static readonly repeatable = ['resource', 'audience'] as const;

  @IsOptional()
  resource?: string | string[] = undefined;

  /** RFC 8693 §2.1: may appear several times; read as resource identifiers (TokenExchangeGrant). */
  @IsOptional()
  audience?: string | string[] = undefined;

  @IsOptional() @IsString() @MaxLength(64, { message: MAX })
  grant_type?: string = undefined;

  @IsOptional() @IsString() @MaxLength(512, { message: MAX })
  code?: string = undefined;

  @IsOptional() @IsString() @MaxLength(2000, { message: MAX })
  redirect_uri?: string = undefined;

  /** RFC 7636 §4.1: 43 to 128 unreserved characters. */
  @IsOptional() @IsString() @Matches(/^[A-Za-z0-9\-._~]{43,128}$/, { message: 'code_verifier must be 43 to 128 characters of [A-Z a-z 0-9 - . _ ~] (RFC 7636 §4.1)' })
  code_verifier?: string = undefined;

  @IsOptional() @IsString() @MaxLength(512, { message: MAX })
  refresh_token?: string = undefined;

  /** RFC 8628 §3.4 (device authorization grant). */
  @IsOptional() @IsString() @MaxLength(512, { message: MAX })
  device_code?: string = undefined;

  @IsOptional() @IsString() @MaxLength(1000, { message: MAX })
  scope?: string = undefined;

  @IsOptional() @IsString() @MaxLength(64, { message: MAX })
  client_id?: string = undefined;

  /** RFC 6749 §4.3.2 (password grant). */
  @IsOptional() @IsString() @MaxLength(256, { message: MAX })
  username?: string = undefined;

  /** RFC 6749 §4.3.2 (password grant). */
  @IsOptional() @IsString() @MaxLength(512, { message: MAX })
  password?: string = undefined;

  /** RFC 8693 §2.1 (token exchange): an access token, opaque or a JWT (with a nested act, longer). */
  @IsOptional() @IsString() @MaxLength(8192, { message: MAX })
  subject_token?: string = undefined;

  @IsOptional() @IsString() @MaxLength(128, { message: MAX })
  subject_token_type?: string = undefined;

  @IsOptional() @IsString() @MaxLength(8192, { message: MAX })
  actor_token?: string = undefined;

  @IsOptional() @IsString() @MaxLength(128, { message: MAX })
  actor_token_type?: string = undefined;

  @IsOptional() @IsString() @MaxLength(128, { message: MAX })
  requested_token_type?: string = undefined;
}
