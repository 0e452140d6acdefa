/** The most group values read from one sign-in's claim or attribute; the rest are ignored (and the truncation logged and audited). */
export const UPSTREAM_GROUPS_LIMIT = 500;
/** A longer value names no group here (a group's name is at most 256 characters) and is ignored. */
export const UPSTREAM_GROUP_VALUE_MAX = 256;

export interface UpstreamGroupValues {
  /** Distinct, trimmed, non-empty values of at most UPSTREAM_GROUP_VALUE_MAX characters, in the upstream's order. */
  values: string[];
  /** How many values the upstream sent. */
  received: number;
  /** More than UPSTREAM_GROUPS_LIMIT were sent: only the first were read. */
  truncated: boolean;
}

/**
 * The group values an upstream sent: a JSON array of strings (OpenID Connect; Entra ID, Okta,
 * Keycloak), the values of a multi-valued SAML attribute (an array too), or one string separated
 * by spaces or commas (some providers flatten the list). An absent claim says the person is in no
 * group (Entra ID and node-oidc-provider leave out a claim with no value). Null when the value has
 * another shape (a number, an object): then it says nothing, and nothing is changed.
 */
export function upstreamGroupValues(raw: unknown): UpstreamGroupValues | null {
  let items: unknown[];
  if (raw === undefined || raw === null) items = [];
  else if (typeof raw === 'string') items = raw.split(/[\s,]+/);
  else if (Array.isArray(raw)) items = raw;
  else return null;
  const kept = items.slice(0, UPSTREAM_GROUPS_LIMIT);
  const values = new Set<string>();
  for (const item of kept) {
    if (typeof item !== 'string') continue;
    const value = item.trim();
    if (value !== '' && value.length <= UPSTREAM_GROUP_VALUE_MAX) values.add(value);
  }
  return { values: [...values], received: items.filter((item) => item !== '').length, truncated: items.length > UPSTREAM_GROUPS_LIMIT };
}

/**
 * Whether the upstream sent `source` as a distributed claim (OpenID Connect Core §5.6.2,
 * `_claim_names`), as Entra ID does when a person is in too many groups ("groups overage"), or said
 * so with `hasgroups: true`. The list is then elsewhere, and its absence says nothing.
 */
export function groupsOverflowed(claims: Record<string, unknown>, source: string): boolean {
  const names = claims._claim_names;
  const distributed = typeof names === 'object' && names !== null && Object.hasOwn(names, source);
  return distributed || (source === 'groups' && claims.hasgroups === true);
}
