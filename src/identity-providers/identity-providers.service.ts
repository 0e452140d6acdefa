import { Inject, Injectable } from '@nestjs/common';
import type { AuditActor } from '../audit/audit-actor.js';
import { AuditService } from '../audit/audit.service.js';
import { ClientsService } from '../clients/clients.service.js';
import { DomainError } from '../common/domain-error.js';
import { appConfig, type AppConfig } from '../config/app.config.js';
import { Transactions } from '../database/transactions.js';
import { IdentityProvider } from './identity-provider.entity.js';
import { IDP_ID, parseSettings, UPSTREAM_PROTOCOL, withGroupDefaults, type IdentityProviderSettings, type UpstreamProvider } from './identity-provider-settings.js';
import { IdentityProviderStore } from './identity-provider.store.js';

/** What an administrator gives idps:create or idps:update: the protocol's settings and the common ones, by their names in IdentityProviderSettings. */
export interface IdentityProviderInput {
  id?: string;
  displayName?: string;
  protocol?: string;
  enabled?: boolean;
  settings?: Record<string, unknown>;
}

/** What idps:show and idps:list print: the settings as stored (secrets only by reference) and where the upstream sends people back. */
export interface IdentityProviderView {
  id: string;
  name: string;
  protocol: string;
  enabled: boolean;
  settings: IdentityProviderSettings;
  /** Give this to the upstream's administrator: the OpenID Connect redirect URI, or our SAML metadata. */
  redirect_uri?: string;
  post_logout_redirect_uri?: string;
  backchannel_logout_uri?: string;
  saml_metadata_url?: string;
  saml_acs_url?: string;
  saml_slo_url?: string;
  linked_people?: number;
  created_at: string;
  updated_at: string;
}

/**
 * The upstream identity providers an administrator configured (issue 45): the rules of creating,
 * changing and deleting them, audited, and the lookups the sign-in page makes (which to offer,
 * which one an email domain belongs to).
 */
@Injectable()
export class IdentityProvidersService {
  private readonly issuer: string;

  constructor(
    private readonly store: IdentityProviderStore,
    private readonly audit: AuditService,
    private readonly transactions: Transactions,
    private readonly clients: ClientsService,
    @Inject(appConfig.KEY) app: AppConfig,
  ) {
    this.issuer = app.issuer;
  }

  async create(input: IdentityProviderInput, actor: AuditActor): Promise<IdentityProviderView> {
    const id = input.id ?? '';
    if (!IDP_ID.test(id)) throw new DomainError('invalid_identity_provider', 'The id must be 1 to 64 lower-case letters, digits and hyphens (not first): it appears in URLs and in idp_hint.');
    const settings = parseSettings(input.protocol, input.settings ?? {});
    const row = Object.assign(new IdentityProvider(), { id, displayName: displayName(input.displayName ?? id), protocol: settings.protocol, enabled: input.enabled ?? true, settings: storedSettings(settings) });
    await this.assertDomainsFree(settings.domains, id);
    await this.transactions.run(async (manager) => {
      if (await manager.existsBy(IdentityProvider, { id })) throw new DomainError('identity_provider_exists', `An identity provider "${id}" exists already.`);
      await this.store.insert(row, manager);
      await this.audit.record({ actor, action: 'idp.created', subject: `idp:${id}`, details: { protocol: settings.protocol, enabled: row.enabled } }, manager);
    });
    return this.show(id);
  }

  /** Changes what `input` names; the rest stays. The protocol cannot change (delete and create again). */
  async update(id: string, input: IdentityProviderInput, actor: AuditActor): Promise<IdentityProviderView> {
    const current = await this.require(id);
    if (input.protocol !== undefined && input.protocol !== current.protocol) throw new DomainError('invalid_identity_provider', `The protocol of "${id}" is ${current.protocol}; to change it, delete the provider and create it again.`);
    const settings = parseSettings(current.protocol, { ...current.settings, ...(input.settings ?? {}) });
    await this.assertDomainsFree(settings.domains, id);
    const changes = { displayName: displayName(input.displayName ?? current.displayName), enabled: input.enabled ?? current.enabled, settings: storedSettings(settings) };
    await this.transactions.run(async (manager) => {
      await this.store.update(id, changes, manager);
      await this.audit.record({ actor, action: 'idp.updated', subject: `idp:${id}`, details: { changed: Object.keys(input.settings ?? {}).concat(input.enabled === undefined ? [] : ['enabled'], input.displayName === undefined ? [] : ['name']) } }, manager);
    });
    return this.show(id);
  }

  /** Deletes the provider and every link to it; the people it created stay (with no way to sign in until linked or given a password). */
  async delete(id: string, actor: AuditActor): Promise<{ deleted: string; links_removed: number }> {
    await this.require(id);
    // A client restricted to this provider would be left with no way in, and a provider created later under the same id let in without anyone deciding it.
    const bound = (await this.clients.list()).filter((client) => client.signInRule?.identityProviders?.includes(id)).map((client) => client.id);
    if (bound.length > 0) throw new DomainError('invalid_identity_provider', `Clients ${bound.join(', ')} allow sign-in through "${id}"; change their rule first (clients:sign-in --client-id ID --any-idp, or --idp OTHER).`);
    const links = await this.store.countLinks(id);
    await this.transactions.run(async (manager) => {
      await this.store.delete(id, manager);
      await this.audit.record({ actor, action: 'idp.deleted', subject: `idp:${id}`, details: { links_removed: links } }, manager);
    });
    return { deleted: id, links_removed: links };
  }

  async list(): Promise<IdentityProviderView[]> {
    return (await this.store.list()).map((row) => this.toView(row));
  }

  /** One page by id, after the last of the previous page (the admin API's list). */
  async page(limit: number, afterId: string | null): Promise<IdentityProviderView[]> {
    return (await this.store.page(limit, afterId)).map((row) => this.toView(row));
  }

  async show(id: string): Promise<IdentityProviderView> {
    const row = await this.require(id);
    return { ...this.toView(row), linked_people: await this.store.countLinks(id) };
  }

  /** An enabled provider by id, as the sign-in flows use it; null when there is none or it is disabled. */
  async findEnabled(id: string): Promise<UpstreamProvider | null> {
    if (!IDP_ID.test(id)) return null;
    const row = await this.store.find(id);
    return row && row.enabled ? toProvider(row) : null;
  }

  /** A provider by id, enabled or not (a back-channel logout still ends sessions of a disabled one). */
  async find(id: string): Promise<UpstreamProvider | null> {
    if (!IDP_ID.test(id)) return null;
    const row = await this.store.find(id);
    return row ? toProvider(row) : null;
  }

  /** The enabled providers, for the sign-in page's buttons, by name. */
  async enabled(): Promise<UpstreamProvider[]> {
    return (await this.store.list())
      .filter((row) => row.enabled)
      .map(toProvider)
      .sort((a, b) => a.displayName.localeCompare(b.displayName));
  }

  /** Where an upstream sends the browser back for provider `id` (what its administrator registers). */
  callbackUrls(id: string, protocol: string): Pick<IdentityProviderView, 'redirect_uri' | 'post_logout_redirect_uri' | 'backchannel_logout_uri' | 'saml_metadata_url' | 'saml_acs_url' | 'saml_slo_url'> {
    const base = `${this.issuer}/federation/${id}`;
    // Our SAML entity ID is the metadata URL (SAML 2.0 Metadata §4.1: well-known location).
    if (protocol === UPSTREAM_PROTOCOL.Saml) return { saml_metadata_url: `${base}/saml/metadata`, saml_acs_url: `${base}/saml/acs`, saml_slo_url: `${base}/saml/slo` };
    return { redirect_uri: `${base}/callback`, post_logout_redirect_uri: `${base}/signed-out`, backchannel_logout_uri: `${base}/backchannel-logout` };
  }

  private async require(id: string): Promise<IdentityProvider> {
    const row = IDP_ID.test(id) ? await this.store.find(id) : null;
    if (!row) throw new DomainError('identity_provider_not_found', `No identity provider "${id}".`);
    return row;
  }

  /** One domain, one provider: home-realm discovery must not depend on which provider the list shows first. */
  private async assertDomainsFree(domains: readonly string[], id: string): Promise<void> {
    for (const other of await this.store.list()) {
      if (other.id === id) continue;
      const taken = domains.find((domain) => ((other.settings.domains as string[] | undefined) ?? []).includes(domain));
      if (taken) throw new DomainError('invalid_identity_provider', `The domain ${taken} belongs to the identity provider "${other.id}" already.`);
    }
  }

  private toView(row: IdentityProvider): IdentityProviderView {
    return {
      id: row.id,
      name: row.displayName,
      protocol: row.protocol,
      enabled: row.enabled,
      settings: toProvider(row).settings,
      ...this.callbackUrls(row.id, row.protocol),
      created_at: row.createdAt.toISOString(),
      updated_at: row.updatedAt.toISOString(),
    };
  }
}

function displayName(name: string): string {
  const trimmed = name.trim();
  if (trimmed.length === 0 || trimmed.length > 100 || /[\p{Cc}\u2028\u2029]/u.test(trimmed)) throw new DomainError('invalid_identity_provider', 'The name must be 1 to 100 printable characters: the sign-in page shows it ("Sign in with <name>").');
  return trimmed;
}

/** The row keeps the protocol in its own column. */
function storedSettings(settings: IdentityProviderSettings): Record<string, unknown> {
  const { protocol: _protocol, ...rest } = settings;
  return rest;
}

function toProvider(row: IdentityProvider): UpstreamProvider {
  return { id: row.id, displayName: row.displayName, enabled: row.enabled, settings: withGroupDefaults({ ...row.settings, protocol: row.protocol } as IdentityProviderSettings) };
}
