import { Injectable } from '@nestjs/common';
import { isSecretReference, readSecretReference } from '../config/secret-reference.js';
import { ClientAuthMethod } from '../common/oauth.constants.js';
import { DomainError } from '../common/domain-error.js';
import { hashSecret } from '../common/secrets.js';
import { CLI_ADMINISTRATOR } from './client-change-policy.js';
import { CLIENT_METADATA_FIELDS, parseClientMetadata } from './client-metadata.js';
import type { Client } from './client.entity.js';
import { ClientsService, type FieldChanges } from './clients.service.js';

/** A document that cannot be applied: every problem, one per line, each naming its client. */
export class ClientDocumentError extends Error {
  constructor(readonly problems: string[]) {
    super(`the document cannot be applied, nothing was changed:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

export type PlanAction = 'create' | 'update' | 'delete' | 'unchanged' | 'keep';

/** One line of the plan, as clients:apply prints it: never a secret (a changed one shows as "changed"). */
export interface PlanEntry {
  client_id: string;
  client_name: string;
  action: PlanAction;
  changes?: Record<string, { old: unknown; new: unknown } | 'changed'>;
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
 * Clients as code (clients:apply): the registered clients made to match a document that lists
 * each client's RFC 7591 metadata under the client_id its applications use. Every entry goes
 * through the rules of every registration (client-metadata.ts, then ClientsService's, FAPI
 * included) before anything is written; the plan then commits in one transaction.
 */
@Injectable()
export class ClientDeclarations {
  constructor(private readonly clients: ClientsService) {}

  /**
   * The plan that makes the clients match `document`: clients the document does not list are
   * deleted with `prune` (the command's default, as the file is the truth), kept without it (the
   * command's --keep-unlisted: a document that describes only some of the clients, leaving those
   * registered over /register alone). A deletion takes their tokens, consents and codes with it,
   * which is why the plan is always shown first.
   */
  async plan(document: unknown, options: { baseDirectory: string; prune: boolean; env?: NodeJS.ProcessEnv }): Promise<ClientPlan> {
    const problems: string[] = [];
    const entries = this.entriesOf(document, problems);
    const existing = new Map((await this.clients.list()).map((client) => [client.id, client]));
    const plan: ClientPlan = { entries: [], create: [], update: [], remove: [] };
    for (const [index, entry] of entries.entries()) {
      const where = `clients[${index}]${typeof entry.client_id === 'string' ? ` (${entry.client_id})` : ''}`;
      try {
        await this.planOne(entry, existing, plan, options);
      } catch (error) {
        if (!(error instanceof DomainError || error instanceof ClientDocumentError)) throw error;
        problems.push(...(error instanceof ClientDocumentError ? error.problems : [error.message]).map((problem) => `${where}: ${problem}`));
      }
    }
    if (problems.length > 0) throw new ClientDocumentError(problems);
    const listed = new Set(entries.map((entry) => entry.client_id));
    for (const client of existing.values()) {
      if (listed.has(client.id)) continue;
      if (options.prune) plan.remove.push(client);
      plan.entries.push({ client_id: client.id, client_name: client.name, action: options.prune ? 'delete' : 'keep' });
    }
    return plan;
  }

  /** Applies a plan in one transaction. */
  apply(plan: ClientPlan): Promise<void> {
    return this.clients.applyAll(plan);
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

  private async planOne(entry: Record<string, unknown>, existing: Map<string, Client>, plan: ClientPlan, options: { baseDirectory: string; env?: NodeJS.ProcessEnv }): Promise<void> {
    const unknown = Object.keys(entry).filter((key) => !CLIENT_METADATA_FIELDS.includes(key));
    if (unknown.length > 0) throw new ClientDocumentError([`unknown field(s) ${unknown.join(', ')}`]);
    const clientId = entry.client_id;
    if (typeof clientId !== 'string' || !CLIENT_ID.test(clientId)) {
      throw new ClientDocumentError(['client_id is required: 1 to 64 letters, digits, ".", "_", "~" or "-", not starting with "-"']);
    }
    const { client_secret: reference, ...metadata } = entry;
    const { client: input } = parseClientMetadata(metadata);
    const secret = this.secretOf(reference, input.tokenEndpointAuthMethod ?? ClientAuthMethod.ClientSecretBasic, options);
    const current = existing.get(clientId);
    if (!current) {
      const { client } = await this.clients.draft(input, { clientId, secret });
      plan.create.push(client);
      plan.entries.push({ client_id: clientId, client_name: client.name, action: 'create' });
      return;
    }
    const { next, changes } = await this.clients.revise(current, input, CLI_ADMINISTRATOR);
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
  private secretOf(reference: unknown, method: string, options: { baseDirectory: string; env?: NodeJS.ProcessEnv }): string | undefined {
    if (!SECRET_METHODS.has(method)) {
      if (reference !== undefined) throw new ClientDocumentError([`a client authenticating with "${method}" has no client_secret`]);
      return undefined;
    }
    if (reference === undefined) throw new ClientDocumentError([`client_secret is required for "${method}": {"env": "VARIABLE"} or {"file": "PATH"}`]);
    if (!isSecretReference(reference)) {
      throw new ClientDocumentError(['client_secret must say where the secret is, {"env": "VARIABLE"} or {"file": "PATH"}, not hold it: the document is meant for version control']);
    }
    const read = readSecretReference(reference, options.baseDirectory, options.env);
    if ('problem' in read) throw new ClientDocumentError([`client_secret: ${read.problem}`]);
    if (!CLIENT_SECRET.test(read.secret)) throw new ClientDocumentError(['client_secret: the secret must be 32 to 200 printable ASCII characters (e.g. openssl rand -base64 32)']);
    return read.secret;
  }
}
