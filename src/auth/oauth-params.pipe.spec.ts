import { InvalidRequestError } from './errors/oauth-error.js';
import { OAuthParamsPipe } from './oauth-params.pipe.js';
import { TokenRequestDto } from './token/token-request.dto.js';

const PARAMETERS = ['grant_type', 'code', 'redirect_uri', 'code_verifier', 'refresh_token', 'scope', 'client_id'];
const VERIFIER = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';

/** The error the pipe throws for these parameters, or undefined when it accepts them. */
function refusal(value: unknown): InvalidRequestError | undefined {
  try {
    new OAuthParamsPipe(TokenRequestDto).transform(value);
    return undefined;
  } catch (error) {
    return error as InvalidRequestError;
  }
}

describe(OAuthParamsPipe.name, () => {
  const pipe = new OAuthParamsPipe(TokenRequestDto);

  it('turns the parameters into the DTO', () => {
    const params = {
      grant_type: 'authorization_code',
      code: 'lk_ac_abc',
      redirect_uri: 'https://client.example.com/cb',
      code_verifier: VERIFIER,
      refresh_token: 'lk_rt_abc',
      scope: 'notes:read',
      client_id: 'client-1',
    };
    const dto = pipe.transform(params);
    expect(dto).toBeInstanceOf(TokenRequestDto);
    expect({ ...dto }).toEqual(params);
  });

  it('ignores unknown parameters (RFC 6749 §3.1), even repeated ones', () => {
    const dto = pipe.transform({ grant_type: 'refresh_token', foo: 'bar', extra: ['a', 'b'] });
    expect(dto.grant_type).toBe('refresh_token');
    expect(dto).not.toHaveProperty('foo');
    expect(dto).not.toHaveProperty('extra');
  });

  it('treats parameters sent without a value as omitted (RFC 6749 §3.1)', () => {
    const dto = pipe.transform({ grant_type: 'authorization_code', code: '', scope: '' });
    expect(dto.grant_type).toBe('authorization_code');
    expect(dto.code).toBeUndefined();
    expect(dto.scope).toBeUndefined();
  });

  it.each([undefined, null])('reads a missing body (%s) as no parameters', (value) => {
    const dto = pipe.transform(value);
    expect(dto).toBeInstanceOf(TokenRequestDto);
    expect(PARAMETERS.map((name) => (dto as unknown as Record<string, unknown>)[name])).toEqual(PARAMETERS.map(() => undefined));
  });

  it.each(PARAMETERS)('refuses %s sent more than once (RFC 6749 §3.1)', (name) => {
    const error = refusal({ grant_type: 'authorization_code', [name]: ['one', 'two'] });
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect(error!.error).toBe('invalid_request');
    expect(error!.status).toBe(400);
    expect(error!.description).toContain(name);
  });

  it('refuses a repeated parameter even when both values are the same', () => {
    expect(refusal({ grant_type: ['authorization_code', 'authorization_code'] })?.error).toBe('invalid_request');
  });

  it.each([
    ['a string', 'grant_type=authorization_code'],
    ['an array', [{ grant_type: 'authorization_code' }]],
    ['a Buffer', Buffer.from('grant_type=authorization_code')],
    ['a number', 42],
  ])('refuses a body that is %s', (_case, value) => {
    expect(refusal(value)?.error).toBe('invalid_request');
  });

  it.each([
    ['an object', { grant_type: 'authorization_code', code: { nested: 'x' } }, 'code'],
    ['a number', { grant_type: 'authorization_code', code: 123 }, 'code'],
    ['a boolean', { grant_type: true }, 'grant_type'],
  ])('refuses a parameter whose value is %s', (_case, value, name) => {
    const error = refusal(value);
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect(error!.description).toContain(name);
  });

  it.each([
    ['grant_type', 65],
    ['code', 513],
    ['redirect_uri', 2001],
    ['refresh_token', 513],
    ['scope', 1001],
    ['client_id', 65],
  ])('refuses an over-long %s (%i characters)', (name, length) => {
    const error = refusal({ [name]: 'a'.repeat(length) });
    expect(error?.error).toBe('invalid_request');
    expect(error!.description).toContain(name);
    expect(refusal({ [name]: 'a'.repeat(length - 1) })).toBeUndefined();
  });

  describe('code_verifier (RFC 7636 §4.1)', () => {
    it.each([
      ['43 characters', 'a'.repeat(43)],
      ['128 characters', 'a'.repeat(128)],
      ['every unreserved character', 'AZaz09-._~'.repeat(5)],
    ])('accepts %s', (_case, verifier) => {
      expect(pipe.transform({ code_verifier: verifier }).code_verifier).toBe(verifier);
    });

    it.each([
      ['42 characters', 'a'.repeat(42)],
      ['129 characters', 'a'.repeat(129)],
      ['a + sign', `${'a'.repeat(42)}+`],
      ['a slash', `${'a'.repeat(42)}/`],
      ['padding', `${'a'.repeat(42)}=`],
      ['a space', `${'a'.repeat(42)} `],
      ['a non-ASCII letter', `${'a'.repeat(42)}é`],
    ])('refuses %s with invalid_request naming code_verifier', (_case, verifier) => {
      const error = refusal({ code_verifier: verifier });
      expect(error).toBeInstanceOf(InvalidRequestError);
      expect(error!.description).toContain('code_verifier');
    });
  });

  it('does not let __proto__ or constructor parameters reach the DTO', () => {
    const body = JSON.parse('{"__proto__": {"grant_type": "polluted"}, "constructor": "x", "code": "c"}') as Record<string, unknown>;
    const dto = pipe.transform(body);
    expect(dto.grant_type).toBeUndefined();
    expect(dto.code).toBe('c');
    expect(Object.getPrototypeOf(dto)).toBe(TokenRequestDto.prototype);
  });
});
