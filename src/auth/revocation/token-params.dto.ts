import { IsOptional, IsString, MaxLength } from 'class-validator';

/** Above the longest access token we issue; the body limit (BODY_LIMIT_BYTES, 64 KiB) bounds the form anyway. */
const MAX_TOKEN_LENGTH = 32_768;

/** The form parameters of POST /revoke (RFC 7009 §2.1) and POST /introspect (RFC 7662 §2.1). */
export class TokenParamsDto {
  /**
   * Opaque tokens are about 50 characters and a JWT access token (RFC 9068) usually a kilobyte or
   * two, but one for ten resources of 2,000 characters (resource-indicators.ts' bounds) is about
   * 28 KB; every token we issue must remain revocable and introspectable (RFC 7009, RFC 7662).
   */
  @IsOptional() @IsString() @MaxLength(MAX_TOKEN_LENGTH, { message: 'The token parameter is too long' })
  token?: string = undefined;

  /** A hint only: the server looks the token up by its hash whatever the hint says (RFC 7009 §2.1). */
  @IsOptional() @IsString() @MaxLength(64, { message: 'The token_type_hint parameter is too long' })
  token_type_hint?: string = undefined;

  @IsOptional() @IsString() @MaxLength(64, { message: 'The client_id parameter is too long' })
  client_id?: string = undefined;
}
