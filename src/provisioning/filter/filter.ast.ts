/**
 * RFC 7644 §3.4.2.2: an attribute path, `[URI ":"] ATTRNAME [ "." subAttr ]`, as written (names are
 * case-insensitive, RFC 7643 §2.1; resolved against the schemas by ScimSchemaRegistry).
 */
export interface AttrPath {
  /** The schema URN that prefixes the name, e.g. the enterprise extension's; undefined when none. */
  schema?: string;
  attr: string;
  sub?: string;
}

export const COMPARE_OPERATORS = ['eq', 'ne', 'co', 'sw', 'ew', 'gt', 'ge', 'lt', 'le'] as const;
export type CompareOperator = (typeof COMPARE_OPERATORS)[number];
export type CompValue = string | number | boolean | null;

/** The filter grammar's expressions (RFC 7644 §3.4.2.2, Figure 1). */
export type Filter =
  | { kind: 'compare'; path: AttrPath; op: CompareOperator; value: CompValue }
  | { kind: 'present'; path: AttrPath }
  | { kind: 'and' | 'or'; left: Filter; right: Filter }
  | { kind: 'not'; filter: Filter }
  /** `emails[type eq "work" and value co "@example.com"]`: the inner filter applies to each value of the multi-valued attribute. */
  | { kind: 'valuePath'; path: AttrPath; filter: Filter };

/** RFC 7644 §3.5.2: a PATCH operation's path, `attrPath` or `valuePath [subAttr]`. */
export interface PatchPath {
  path: AttrPath;
  /** `members[value eq "…"]`: which values of a multi-valued attribute the operation targets. */
  filter?: Filter;
  /** `emails[type eq "work"].value`: the sub-attribute of the selected values. */
  subAfterFilter?: string;
}
