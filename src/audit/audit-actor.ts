/**
 * Who made a change, and from where when it came over HTTP (issue 48: "every change is audited with
 * who, what and from where"). The CLI and the server's own flows pass a plain string (`cli`,
 * `user:<id>`, `client:<id>`, `idp:<id>`); the admin API passes its caller (AdminCaller has both
 * fields), so the services it shares with the CLI record the address without another parameter.
 */
export interface AuditOrigin {
  actor: string;
  /** The caller's address as Fastify sees it (the client's own once TRUST_PROXY names the proxies); absent for the CLI's operator. */
  ip?: string;
}

export type AuditActor = string | AuditOrigin;

/** The actor's name alone: what a row's `actor` column and a `granted_by` hold. */
export function actorName(actor: AuditActor): string {
  return typeof actor === 'string' ? actor : actor.actor;
}

/** The caller's address, or null for a change not made over HTTP. */
export function actorIp(actor: AuditActor): string | null {
  return typeof actor === 'string' ? null : (actor.ip ?? null);
}
