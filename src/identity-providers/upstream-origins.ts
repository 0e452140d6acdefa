import { Injectable } from '@nestjs/common';
import type { UpstreamProvider } from './identity-provider-settings.js';
import { IdentityProvidersService } from './identity-providers.service.js';

/** The origins a provider's sign-in and logout endpoints are at (registered by federation/, which reads its metadata). */
export type OriginsOf = (provider: UpstreamProvider) => Promise<string[]>;

/**
 * Where a form of ours may end up after redirects (issue 45). Browsers apply CSP form-action to
 * every redirect that follows a form's POST (CSP Level 3 §6.3.3.1, as Chromium and Firefox
 * enforce it): the sign-in form's home-realm discovery, the sign-out and the linking forms go on
 * to an upstream provider, so the pages holding them list its origins. federation/ knows them
 * (from the discovery document or the SAML metadata it keeps) and registers how here.
 */
@Injectable()
export class UpstreamOrigins {
  private originsOf: OriginsOf = (provider) => Promise.resolve(provider.settings.protocol === 'oidc' ? [new URL(provider.settings.issuer).origin] : []);

  constructor(private readonly providers: IdentityProvidersService) {}

  register(originsOf: OriginsOf): void {
    this.originsOf = originsOf;
  }

  /** The origins of these providers' endpoints (of every enabled one when none are given); a provider whose metadata cannot be read now adds none. */
  async of(providers?: readonly UpstreamProvider[]): Promise<string[]> {
    const list = providers ?? (await this.providers.enabled());
    const origins = await Promise.all(list.map((provider) => this.originsOf(provider).catch(() => [])));
    return [...new Set(origins.flat())];
  }
}
