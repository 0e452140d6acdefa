import { IsOptional, IsString, MaxLength } from 'class-validator';

/** The form parameters of POST /revoke (RFC 7009 §2.1) and POST /introspect (RFC 7662 §2.1). */
export class TokenParamsDto {
  /** 4096: a JWT access token (RFC 9068) is a few hundred bytes to a kilobyte or two; opaque ones are 50. */
  @IsOptional() @IsString() @MaxLength(4096, { message: 'The token parameter is too long' })
  token?: string = undefined;

  /** A hint only: the server looks the token up by its hash whatever the hint says (RFC 7009 §2.1). */
  @IsOptional() @IsString() @MaxLength(64, { message: 'The token_type_hint parameter is too long' })
  token_type_hint?: string = undefined;

  @IsOptional() @IsString() @MaxLength(64, { message: 'The client_id parameter is too long' })
  client_id?: string = undefined;
}
