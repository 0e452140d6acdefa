import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module.js';
import { AuthModule } from '../auth/auth.module.js';
import { CommonModule } from '../common/common.module.js';
import { FactorsModule } from '../factors/factors.module.js';
import { IdentityProvidersModule } from '../identity-providers/identity-providers.module.js';
import { MetricsModule } from '../metrics/metrics.module.js';
import { FederationController } from './federation.controller.js';
import { SamlController } from './saml/saml.controller.js';
import { SAML_PROVIDERS } from './saml/saml.providers.js';
import { FederationMetrics } from './federation.metrics.js';
import { UpstreamOpenIdConnect } from './oidc/upstream-openid-connect.js';
import { UpstreamSignIn } from './upstream-sign-in.service.js';
import { UpstreamSignOut } from './upstream-sign-out.js';
import { UpstreamEndpoints } from './upstream-endpoints.js';
import { UpstreamBackchannelLogout } from './oidc/upstream-backchannel-logout.js';
import { UpstreamLogoutController } from './upstream-logout.controller.js';
import { ReplayModule } from '../replay/replay.module.js';
import { SessionsModule } from '../sessions/sessions.module.js';

/**
 * Sign-in through the company's identity provider (issue 45): OpenID Connect and SAML 2.0 upstream
 * providers, the just-in-time accounts they bring, and logout in both directions. The sign-in page
 * and the authentication policy only learn that a person may also be signed in upstream.
 */
@Module({
  imports: [CommonModule, AuditModule, MetricsModule, AuthModule, FactorsModule, IdentityProvidersModule, ReplayModule, SessionsModule],
  controllers: [FederationController, UpstreamLogoutController, SamlController],
  providers: [...SAML_PROVIDERS, UpstreamSignIn, UpstreamSignOut, UpstreamEndpoints, UpstreamBackchannelLogout, UpstreamOpenIdConnect, FederationMetrics],
  exports: [UpstreamSignIn, UpstreamOpenIdConnect],
})
export class FederationModule {}
