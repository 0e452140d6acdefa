import { Injectable, type OnModuleInit } from '@nestjs/common';
import { UPSTREAM_PROTOCOL } from '../identity-providers/identity-provider-settings.js';
import { UpstreamOrigins } from '../identity-providers/upstream-origins.js';
import { UpstreamOpenIdConnect } from './oidc/upstream-openid-connect.js';
import { IdpMetadataCache } from './saml/idp-metadata.cache.js';

/**
 * Tells UpstreamOrigins where each provider's sign-in and logout endpoints are, from what this
 * instance already keeps: the OpenID Connect discovery document, the SAML metadata. The pages
 * whose forms may redirect there list them in their CSP form-action.
 */
@Injectable()
export class UpstreamEndpoints implements OnModuleInit {
  constructor(
    private readonly origins: UpstreamOrigins,
    private readonly openIdConnect: UpstreamOpenIdConnect,
    private readonly samlMetadata: IdpMetadataCache,
  ) {}

  onModuleInit(): void {
    this.origins.register(async (provider) => {
      const settings = provider.settings;
      if (settings.protocol === UPSTREAM_PROTOCOL.OpenIdConnect) return this.openIdConnect.endpointOrigins(provider, settings);
      const metadata = await this.samlMetadata.metadataOf(provider.id, settings);
      return [metadata.singleSignOn.location, metadata.singleLogout].filter((url): url is string => url !== null).map((url) => new URL(url).origin);
    });
  }
}
