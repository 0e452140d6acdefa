import { getMetadataStorage } from 'class-validator';

/** Whether a DTO instance certainly passes its class-validator decorators. */
export type ParamsCheck = (instance: Record<string, unknown>) => boolean;

type Rule = (value: unknown) => boolean;

/**
 * A DTO's class-validator decorators compiled once into one plain function (issue 47: validateSync
 * read the metadata again on every token request). It only accepts: true means validateSync would
 * find no error, false means "ask validateSync", which then gives the refusal its exact message
 * (or accepts, where a rule here is stricter: a String object, MaxLength's count of surrogate
 * pairs as one character). Undefined when the DTO uses anything beyond @IsOptional, @IsString,
 * @MaxLength and @Matches without options: such a DTO is always validated by class-validator.
 */
export function compileParamsCheck(dto: new () => object): ParamsCheck | undefined {
  const properties = new Map<string, { optional: boolean; rules: Rule[] }>();
  for (const metadata of getMetadataStorage().getTargetValidationMetadatas(dto, '', false, false)) {
    // Options that change when a decorator applies (groups, `always`, `each`, `validateIf`): not compiled.
    // With options, class-validator copies their groups as given, so they may be undefined.
    const groups = metadata.groups as string[] | undefined;
    if (metadata.each || metadata.always !== undefined || metadata.validateIf !== undefined || (groups !== undefined && groups.length > 0)) return undefined;
    const property = properties.get(metadata.propertyName) ?? { optional: false, rules: [] };
    properties.set(metadata.propertyName, property);
    if (metadata.type === 'conditionalValidation' && metadata.name === 'isOptional') {
      property.optional = true;
      continue;
    }
    const rule = metadata.type === 'customValidation' ? compileRule(metadata.name, metadata.constraints) : undefined;
    if (rule === undefined) return undefined;
    property.rules.push(rule);
  }
  const checks = [...properties].map(([name, { optional, rules }]) => ({ name, optional, rules }));
  return (instance) => {
    for (const { name, optional, rules } of checks) {
      const value = instance[name];
      // @IsOptional: null and undefined skip the property's other decorators.
      if (optional && (value === undefined || value === null)) continue;
      for (const rule of rules) if (!rule(value)) return false;
    }
    return true;
  };
}

/** class-validator's own test for each decorator (validator.js underneath), or a stricter one. */
function compileRule(name: string | undefined, constraints: unknown[]): Rule | undefined {
  switch (name) {
    case 'isString':
      return (value) => typeof value === 'string';
    case 'maxLength': {
      // validator.js isLength counts a surrogate pair or a variation selector as no extra
      // character, so a string's length is never below its count: at most the limit passes there too.
      const max = constraints[0];
      return typeof max === 'number' ? (value) => typeof value === 'string' && value.length <= max : undefined;
    }
    case 'matches': {
      // validator.js matches: `!!str.match(pattern)`, the pattern compiled with the modifiers when a string.
      const [pattern, modifiers] = constraints;
      const regex = pattern instanceof RegExp ? pattern : typeof pattern === 'string' ? new RegExp(pattern, typeof modifiers === 'string' ? modifiers : undefined) : undefined;
      return regex ? (value) => typeof value === 'string' && value.match(regex) !== null : undefined;
    }
    default:
      return undefined;
  }
}
