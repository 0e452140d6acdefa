/** RFC 7643 §7: how a schema describes one attribute, as /Schemas publishes it. */
export interface AttributeDefinition {
  name: string;
  type: 'string' | 'boolean' | 'decimal' | 'integer' | 'dateTime' | 'reference' | 'complex' | 'binary';
  multiValued: boolean;
  description: string;
  required: boolean;
  caseExact: boolean;
  mutability: 'readOnly' | 'readWrite' | 'immutable' | 'writeOnly';
  returned: 'always' | 'never' | 'default' | 'request';
  uniqueness: 'none' | 'server' | 'global';
  canonicalValues?: string[];
  referenceTypes?: string[];
  subAttributes?: AttributeDefinition[];
}

/** RFC 7643 §7: a schema resource. */
export interface SchemaDefinition {
  id: string;
  name: string;
  description: string;
  attributes: AttributeDefinition[];
}

type Options = Partial<Omit<AttributeDefinition, 'name' | 'type' | 'description'>>;

/** RFC 7643 §2.2's defaults: optional, single-valued, case-insensitive, readWrite, returned by default, not unique. */
export function attribute(name: string, type: AttributeDefinition['type'], description: string, options: Options = {}): AttributeDefinition {
  const base: AttributeDefinition = { name, type, multiValued: false, description, required: false, caseExact: false, mutability: 'readWrite', returned: 'default', uniqueness: 'none' };
  return { ...base, ...options };
}

export const text = (name: string, description: string, options: Options = {}): AttributeDefinition => attribute(name, 'string', description, options);

export function complex(name: string, description: string, subAttributes: AttributeDefinition[], options: Options = {}): AttributeDefinition {
  return attribute(name, 'complex', description, { ...options, subAttributes });
}

/** RFC 7643 §2.4: the sub-attributes a multi-valued attribute's values usually have. */
export function multiValued(name: string, description: string, types: string[], extra: AttributeDefinition[] = [], valueOptions: Options = {}): AttributeDefinition {
  return complex(
    name,
    description,
    [
      text('value', `The value of ${name}.`, valueOptions),
      text('display', 'A human-readable name, primarily used for display purposes.', { mutability: 'readOnly' }),
      text('type', 'A label indicating the function of the value.', types.length > 0 ? { canonicalValues: types } : {}),
      attribute('primary', 'boolean', 'Whether this is the primary value of the attribute.'),
      ...extra,
    ],
    { multiValued: true },
  );
}

/** Case-insensitive lookup of a definition by name (RFC 7643 §2.1: attribute names are case-insensitive). */
export function findAttribute(attributes: readonly AttributeDefinition[] | undefined, name: string): AttributeDefinition | undefined {
  const lower = name.toLowerCase();
  return attributes?.find((definition) => definition.name.toLowerCase() === lower);
}
