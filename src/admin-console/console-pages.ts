import { Injectable } from '@nestjs/common';
import { UpstreamOrigins } from '../identity-providers/upstream-origins.js';
import { Eta } from 'eta';
import { join } from 'node:path';
import type { InteractionOutcome } from '../auth/interaction/interaction-responder.js';
import { PROJECT_ROOT } from '../common/project-root.js';
import type { AdminArea } from '../scopes/admin-scopes.js';
import { CONSOLE, SIGN_OUT_PATH } from './console-paths.js';
import type { ConsoleVisit } from './console-visit.js';

export type ConsoleView =
  | 'dashboard'
  | 'people'
  | 'person'
  | 'sessions'
  | 'groups'
  | 'group'
  | 'group-form'
  | 'clients'
  | 'client'
  | 'client-new'
  | 'resource-servers'
  | 'resource-server-new'
  | 'identity-providers'
  | 'identity-provider'
  | 'identity-provider-new'
  | 'identity-provider-form'
  | 'audit'
  | 'keys'
  | 'confirm'
  | 'error'
  | 'signed-out'
  // The people and client forms (console-person-*.controller.ts, console-client-edit.controller.ts).
  | 'person-new'
  | 'person-edit'
  | 'person-roles'
  | 'person-link'
  | 'client-edit';

/** The console's sections, in the navigation's order, each shown to whoever may read it. */
const SECTIONS: readonly { path: string; label: string; area: AdminArea | null }[] = [
  { path: CONSOLE, label: 'Dashboard', area: null },
  { path: `${CONSOLE}/people`, label: 'People', area: 'people' },
  { path: `${CONSOLE}/sessions`, label: 'Sessions', area: 'people' },
  { path: `${CONSOLE}/groups`, label: 'Groups', area: 'system' },
  { path: `${CONSOLE}/clients`, label: 'Clients', area: 'clients' },
  { path: `${CONSOLE}/resource-servers`, label: 'Resource servers', area: 'clients' },
  { path: `${CONSOLE}/identity-providers`, label: 'Identity providers', area: 'system' },
  { path: `${CONSOLE}/audit`, label: 'Audit log', area: 'audit' },
  { path: `${CONSOLE}/keys`, label: 'Signing keys', area: 'system' },
];

/**
 * Renders the console's pages (views/admin-console/, Eta with auto-escaping), sent through the same
 * responder as the sign-in pages (sendOutcome: no-store, a CSP without inline script, never framed).
 * Pages work without JavaScript; the one script (/admin/assets/console.js) only adds a Copy button
 * beside a secret shown once.
 */
@Injectable()
export class ConsolePages {
  private readonly eta = new Eta({ views: join(PROJECT_ROOT, 'views', 'admin-console'), cache: true, autoEscape: true, autoTrim: false });

  constructor(private readonly upstreamOrigins: UpstreamOrigins) {}

  /**
   * A page for a signed-in administrator: the sections their roles open, who they are, the
   * sign-out form and the page before's message. Signing out of an administrator who came through
   * an upstream identity provider goes on to its logout: CSP form-action lists those origins.
   */
  async page(visit: ConsoleVisit, view: ConsoleView, title: string, data: Record<string, unknown>, options: { status?: number; section?: string; scripts?: boolean } = {}): Promise<InteractionOutcome> {
    const section = options.section ?? CONSOLE;
    const nav = SECTIONS.filter((entry) => entry.area === null || visit.can(entry.area, 'read')).map((entry) => ({ ...entry, current: entry.path === section }));
    const formTargets = await this.upstreamOrigins.of();
    return this.render(view, title, { ...data, nav, administrator: visit.administrator, csrfToken: visit.csrfToken, notice: visit.flash.notice, warning: visit.flash.warning, signOut: SIGN_OUT_PATH }, { ...options, formTargets });
  }

  /** A page without a signed-in administrator's navigation: a refusal, an error, signed out. */
  plain(view: ConsoleView, title: string, data: Record<string, unknown>, status = 200): InteractionOutcome {
    return this.render(view, title, { ...data, nav: null }, { status });
  }

  error(status: number, title: string, message: string, retryUrl?: string): InteractionOutcome {
    return this.plain('error', title, { status, message, retryUrl }, status);
  }

  private render(view: ConsoleView, title: string, data: Record<string, unknown>, options: { status?: number; scripts?: boolean; formTargets?: string[] }): InteractionOutcome {
    const html = this.eta.render(`./${view}`, { ...data, title, when, json, scripts: options.scripts === true });
    return { kind: 'page', page: { status: options.status ?? 200, html, formTargets: options.formTargets ?? [], scripts: options.scripts } };
  }
}

/** An instant as an administrator reads it: 2026-11-30 08:00:05 UTC; a dash for none. */
export function when(value: unknown): string {
  if (typeof value !== 'string' || value === '') return '—';
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? value : `${date.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

/** An audit event's details for a table cell, `name: value` each (escaped by the template like any text). */
function json(value: unknown): string {
  if (typeof value !== 'object' || value === null) return '';
  return Object.entries(value)
    .map(([name, item]) => `${name}: ${typeof item === 'string' ? item : JSON.stringify(item)}`)
    .join(', ');
}
