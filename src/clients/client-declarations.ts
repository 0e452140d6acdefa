import { Injectable } from '@nestjs/common';
import { ClientAuthMethod } from '../common/oauth.constants.js';
import { DomainError } from '../common/domain-error.js';
import { splitScope } from '../common/scope.js';
import { hashSecret } from '../common/secrets.js';
import { assertOwnerMayManage, assertOwnerScopesRespected, type ClientEditor } from './client-change-policy.js';
import { CLIENT_METADATA_FIELDS, parseClientMetadata } from './client-metadata.js';
import { clientSecretFrom, referenceForms, type SecretReferenceScope } from './client-secret-reference.js';
import type { Client } from './client.entity.js';
import { ClientsService, type FieldChanges } from './clients.service.js';
import { CONSOLE_CLIENT_ID } from './console-client-id.js';

/**
 * A document that cannot be applied: every problem, one per line, each naming its client.
 * `forbidden`: at least one is the editor's rights (admin_client_protected), not the document's form.
 */
export class ClientDocumentError extends Error {
  constructor(
    readonly problems: string[],
    readonly forbidden = false,
  ) {
    super(`the document cannot be applied, nothing was changed:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

/** Who plans, and how: the editor whose rights every entry is held to (client-change-policy.ts), whether unlisted clients go, where secrets may be read. */
export interface PlanOptions {
  editor: ClientEditor;
  prune: boolean;
  secrets: SecretReferenceScope;
}

export type PlanAction = 'create' | 'update' | 'delete' | 'unchanged' | 'keep';

/** One line of the plan, as clients:apply prints it: never a secret (a changed one shows as "changed"). */
export interface PlanEntry {
  client_id: string;
  client_name: string;
  action: PlanAction;
  changes?: Record<string, { old: unknown; new: unknown } | 'changed'>;
  /** Why a client the document leaves out is kept when unlisted clients are deleted (the admin console's own). */
  note?: string;
}

/** How many clients each action touches, as clients:apply and the admin API answer it. */
export function planSummary(entries: readonly PlanEntry[]): Record<PlanAction, number> {
  const count = (action: PlanAction): number => entries.filter((entry) => entry.action === action).length;
  return { create: count('create'), update: count('update'), delete: count('delete'), unchanged: count('unchanged'), keep: count('keep') };
}

export interface ClientPlan {
  entries: PlanEntry[];
  create: Client[];
  update: { next: Client; changes: FieldChanges; secretChanged: boolean }[];
  remove: Client[];
}

/** A client id an administrator chooses: the URL-safe characters of RFC 3986 §2.3, not starting with "-" (it would read as an option on command lines). */
const CLIENT_ID = /^[A-Za-z0-9][A-Za-z0-9._~-]{0,63}$/;
/** RFC 6749 Appendix A.2: a client_secret is VSCHARs. At least 32 of them: it is stored as a fast hash, which only a high-entropy secret makes safe (common/secrets.ts). */
const CLIENT_SECRET = /^[\x20-\x7e]{32,200}$/;
const SECRET_METHODS = new Set<string>([ClientAuthMethod.ClientSecretBasic, ClientAuthMethod.ClientSecretPost]);

/**
 * Clients as code (clients:apply, and PUT /client-declarations of the admin API): the registered
 * clients made to match a document that lists each client's RFC 7591 metadata under the
 * client_id its applications use. Every entry goes through the rules of every registration
 * (client-metadata.ts, then ClientsService's, FAPI included) and through the editor's rights
 * (client-change-policy.ts: only an owner creates, changes or deletes a client holding an
 * owner-only scope) before anything is written; the plan then commits in one transaction.
 */
@Injectable()
export class ClientDeclarations {
  constructor(private readonly clients: ClientsService) {}

  /**
   * The plan that makes the clients match `document`: clients the document does not list are
   * deleted with `prune` (the command's default, as the file is the truth), kept without it (the
   * command's --keep-unlisted: a document that describes only some of the clients, leaving those
   * registered over /register alone). A deletion takes their tokens, consents and codes with it,
   * which is why the plan is always shown first. The admin console's own client is never deleted
   * by a document that leaves it out: the console registers and keeps it itself, and deleting it
   * would end every administrator's console session.
   */
  async plan(document: unknown, options: PlanOptions): Promise<ClientPlan> {
    const problems: string[] = [];
    let forbidden = false;
    const collect = (where: string, error: unknown): void => {
      if (!(error instanceof DomainError || error instanceof ClientDocumentError)) throw error;
      forbidden ||= error instanceof DomainError ? error.code === 'admin_client_protected' : error.forbidden;
      problems.push(...(error instanceof ClientDocumentError ? error.problems : [error.message]).map((problem) => `${where}: ${problem}`));
    };
    const entries = this.entriesOf(document, problems);
    const existing = new Map((await this.clients.list()).map((client) => [client.id, client]));
    const plan: ClientPlan = { entries: [], create: [], update: [], remove: [] };
    for (const [index, entry] of entries.entries()) {
      try {
        await this.planOne(entry, existing, plan, options);
      } catch (error) {
        collect(`clients[${index}]${typeof entry.client_id === 'string' ? ` (${entry.client_id})` : ''}`, error);
      }
    }
    const listed = new Set(entries.map((entry) => entry.client_id));
    for (const client of existing.values()) {
      if (listed.has(client.id)) continue;
      try {
        this.planUnlisted(client, plan, options);
      } catch (error) {
        collect(`${client.id} (not in the document)`, error);
      }
    }
    if (problems.length > 0) throw new ClientDocumentError(problems, forbidden);
    return plan;
  }

  /** Applies a plan in one transaction, audited as `by` made it (the editor that planned it). */
  apply(plan: ClientPlan, by: ClientEditor): Promise<void> {
    return this.clients.applyAll(plan, by);
  }

  private entriesOf(document: unknown, problems: string[]): Record<string, unknown>[] {
    if (typeof document !== 'object' || document === null || Array.isArray(document) || !Array.isArray((document as { clients?: unknown }).clients)) {
      throw new ClientDocumentError(['the document must be an object with a "clients" list']);
    }
    const stray = Object.keys(document).filter((key) => key !== 'clients' && key !== '$comment');
    if (stray.length > 0) problems.push(`unknown top-level field(s): ${stray.join(', ')}`);
    const entries = (document as { clients: unknown[] }).clients;
    const seen = new Set<unknown>();
    entries.forEach((entry, index) => {
      if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) throw new ClientDocumentError([`clients[${index}]: must be an object of client metadata`]);
      const id = (entry as Record<string, unknown>).client_id;
      if (seen.has(id)) problems.push(`clients[${index}]: client_id ${JSON.stringify(id)} is listed twice`);
      seen.add(id);
    });
    return entries as Record<string, unknown>[];
  }

  /** A registered client the document leaves out: deleted with `prune` (an owner's act on a client holding an owner-only scope), else kept. */
  private planUnlisted(client: Client, plan: ClientPlan, options: PlanOptions): void {
    if (!options.prune) {
      plan.entries.push({ client_id: client.id, client_name: client.name, action: 'keep' });
      return;
    }
    if (client.id === CONSOLE_CLIENT_ID) {
      plan.entries.push({ client_id: client.id, client_name: client.name, action: 'keep', note: "the admin console's own client, which the console keeps: never deleted by a document" });
      return;
    }
    try {
      assertOwnerMayManage(client.scope, options.editor);
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      throw new DomainError(error.code, `it would be deleted. ${error.message}. Keep the clients the document leaves out (--keep-unlisted, keep_unlisted), or have an owner apply it`);
    }
    plan.remove.push(client);
    plan.entries.push({ client_id: client.id, client_name: client.name, action: 'delete' });
  }

  private async planOne(entry: Record<string, unknown>, existing: Map<string, Client>, plan: ClientPlan, options: PlanOptions): Promise<void> {
    const unknown = Object.keys(entry).filter((key) => !CLIENT_METADATA_FIELDS.includes(key));
    if (unknown.length > 0) throw new ClientDocumentError([`unknown field(s) ${unknown.join(', ')}`]);
    const clientId = entry.client_id;
    if (typeof clientId !== 'string' || !CLIENT_ID.test(clientId)) {
      throw new ClientDocumentError(['client_id is required: 1 to 64 letters, digits, ".", "_", "~" or "-", not starting with "-"']);
    }
    const { client_secret: reference, ...metadata } = entry;
    const { client: input } = parseClientMetadata(metadata);
    const secret = this.secretOf(reference, input.tokenEndpointAuthMethod ?? ClientAuthMethod.ClientSecretBasic, options.secrets);
    const current = existing.get(clientId);
    // The console's id is the server's to register (console-client.ts, first party: first-party.ts).
    // Claimed first by a document, a client the console cannot take over (a public one) would keep the console from signing anyone in.
    if (!current && clientId === CONSOLE_CLIENT_ID) throw new ClientDocumentError([`client_id ${CONSOLE_CLIENT_ID} is the admin console's own, which the server registers on the console's first use`]);
    if (!current) {
      const { client } = await this.clients.draft(input, { clientId, secret });
      assertOwnerScopesRespected(null, splitScope(client.scope), options.editor);
      plan.create.push(client);
      plan.entries.push({ client_id: clientId, client_name: client.name, action: 'create' });
      return;
    }
    // A client holding an owner-only scope is an owner's to list at all, as PATCH and RFC 7592's PUT refuse a non-owner its very registration.
    const { next, changes } = await this.clients.revise(current, input, options.editor);
    const secretChanged = secret !== undefined && !this.clients.secretMatches(current, secret);
    if (secretChanged) next.secretHash = hashSecret(secret);
    if (Object.keys(changes).length === 0 && !secretChanged) {
      plan.entries.push({ client_id: clientId, client_name: current.name, action: 'unchanged' });
      return;
    }
    plan.update.push({ next, changes, secretChanged });
    plan.entries.push({ client_id: clientId, client_name: next.name, action: 'update', changes: { ...changes, ...(secretChanged ? { client_secret: 'changed' as const } : {}) } });
  }

  /** The secret a secret-based client's entry names; none for other clients. The document names where it is, never holds it. */
  private secretOf(reference: unknown, method: string, scope: SecretReferenceScope): string | undefined {
    if (!SECRET_METHODS.has(method)) {
      if (reference !== undefined) throw new ClientDocumentError([`a client authenticating with "${method}" has no client_secret`]);
      return undefined;
    }
    if (reference === undefined) throw new ClientDocumentError([`client_secret is required for "${method}": ${referenceForms(scope)}`]);
    const read = clientSecretFrom(reference, scope);
    if ('problem' in read) throw new ClientDocumentError([read.problem]);
    if (!CLIENT_SECRET.test(read.secret)) throw new ClientDocumentError(['client_secret: the secret must be 32 to 200 printable ASCII characters (e.g. openssl rand -base64 32)']);
    return read.secret;
  }
}
