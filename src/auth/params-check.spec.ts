import { IsIn, IsOptional, IsString, MaxLength, validateSync } from 'class-validator';
import { compileParamsCheck } from './params-check.js';
import { TokenParamsDto } from './revocation/token-params.dto.js';
import { TokenRequestDto } from './token/token-request.dto.js';

const VERIFIER = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';

/** Values around each rule of the DTOs: the compiled check may refuse more than class-validator, never less. */
const VALUES: unknown[] = [
  undefined,
  null,
  'plain',
  VERIFIER,
  'a'.repeat(42),
  'a'.repeat(64),
  'a'.repeat(65),
  'a'.repeat(512),
  'a'.repeat(513),
  // Surrogate pairs: validator.js counts each as one character, String.length as two.
  '😀'.repeat(40),
  '😀'.repeat(64),
  'x'.repeat(32_768),
  'x'.repeat(32_769),
  'bad verifier with spaces and more than forty-three characters',
  42,
  true,
  { nested: 'x' },
  ['one', 'two'],
  [1, 2],
];

function instanceOf<T extends object>(dto: new () => T, name: string, value: unknown): Record<string, unknown> {
  const instance = new dto() as Record<string, unknown>;
  instance[name] = value;
  return instance;
}

describe(compileParamsCheck.name, () => {
  it.each([
    ['TokenRequestDto', TokenRequestDto],
    ['TokenParamsDto', TokenParamsDto],
  ] as const)('accepts only what class-validator accepts (%s), one field at a time', (_name, dto) => {
    const check = compileParamsCheck(dto)!;
    expect(check).toBeDefined();
    const disagreements: string[] = [];
    for (const name of Object.keys(new dto())) {
      for (const value of VALUES) {
        const instance = instanceOf(dto, name, value);
        if (check(instance) && validateSync(instance, { forbidUnknownValues: false }).length > 0) disagreements.push(`${name}=${JSON.stringify(value)?.slice(0, 20)}`);
      }
    }
    expect(disagreements).toEqual([]);
  });

  it('accepts an ordinary token request without class-validator', () => {
    const instance = Object.assign(new TokenRequestDto(), { grant_type: 'authorization_code', code: 'lk_ac_abc', redirect_uri: 'https://client.example.com/cb', code_verifier: VERIFIER, resource: ['https://a.example', 'https://b.example'] });
    expect(compileParamsCheck(TokenRequestDto)!(instance as unknown as Record<string, unknown>)).toBe(true);
    expect(compileParamsCheck(TokenRequestDto)!(new TokenRequestDto() as unknown as Record<string, unknown>)).toBe(true);
  });

  it('leaves what it cannot tell to class-validator: a too-long value, a bad code_verifier, a non-string', () => {
    const check = compileParamsCheck(TokenRequestDto)!;
    expect(check(instanceOf(TokenRequestDto, 'grant_type', 'a'.repeat(65)))).toBe(false);
    expect(check(instanceOf(TokenRequestDto, 'code_verifier', 'short'))).toBe(false);
    expect(check(instanceOf(TokenRequestDto, 'scope', 42))).toBe(false);
  });

  it('compiles nothing for a DTO with a decorator it does not know, or with validation options that change when one applies', () => {
    class WithIsIn {
      @IsOptional() @IsIn(['a'])
      kind?: string = undefined;
    }
    class WithGroups {
      @IsOptional() @IsString() @MaxLength(4, { groups: ['strict'] })
      name?: string = undefined;
    }
    expect(compileParamsCheck(WithIsIn)).toBeUndefined();
    expect(compileParamsCheck(WithGroups)).toBeUndefined();
  });
});
