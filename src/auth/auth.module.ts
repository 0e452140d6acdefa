import { AdminRolesModule } from '../admin/admin-roles.module.js';
import { ClientDpopProof } from './client-dpop-proof.js';
import { JwtAccessTokens } from './token/jwt-access-tokens.js';
import { ResourceServersModule } from '../resource-servers/resource-servers.module.js';
import { ResourceIndicators } from './resource-indicators.js';
import { ReplayModule } from '../replay/replay.module.js';
import { DpopModule } from '../dpop/dpop.module.js';
import { Module } from '@nestjs/common';
import { IdentityProvidersModule } from '../identity-providers/identity-providers.module.js';
import { GroupsModule } from '../groups/groups.module.js';
import { PassportModule } from '@nestjs/passport';
import { ClientsModule } from '../clients/clients.module.js';
import { CodesModule } from '../codes/codes.module.js';
import { ConsentsModule } from '../consents/consents.module.js';
import { ScopesModule } from '../scopes/scopes.module.js';
import { TokensModule } from '../tokens/tokens.module.js';
import { SessionsModule } from '../sessions/sessions.module.js';
import { UsersModule } from '../users/users.module.js';
import { AuthorizationRequestValidator } from './authorize/authorization-request.validator.js';
import { AuthorizeController } from './authorize/authorize.controller.js';
import { AuthorizeService } from './authorize/authorize.service.js';
import { ClientAuthenticationGuard } from './client-auth/client-authentication.guard.js';
import { ClientBasicStrategy } from './client-auth/client-basic.strategy.js';
import { ClientAssertionVerifier } from './client-auth/client-assertion.verifier.js';
import { ClientCredentialsVerifier } from './client-auth/client-credentials.verifier.js';
import { ClientJwksCache } from './client-auth/client-jwks.cache.js';
import { ClientNoneStrategy, ClientSecretPostStrategy, ClientPrivateKeyJwtStrategy } from './client-auth/client-form.strategies.js';
import { InteractionExceptionFilter } from './errors/interaction-exception.filter.js';
import { AuthorizationCodeGrant } from './grants/authorization-code.grant.js';
import { ClientCredentialsGrant } from './grants/client-credentials.grant.js';
import { GRANT_HANDLERS, type GrantHandler } from './grants/grant-handler.js';
import { PasswordGrant } from './grants/password.grant.js';
import { RefreshTokenGrant } from './grants/refresh-token.grant.js';
import { TokenExchangeGrant } from './grants/token-exchange.grant.js';
import { DeviceCodeGrant } from './grants/device-code.grant.js';
import { GrantSignInLevel } from './grants/grant-sign-in-level.js';
import { DeviceCodesModule } from '../device-codes/device-codes.module.js';
import { DeviceAuthorizationController } from './device-authorization/device-authorization.controller.js';
import { DeviceAuthorizationService } from './device-authorization/device-authorization.service.js';
import { TokenExchangeModule } from '../token-exchange/token-exchange.module.js';
import { HomeController } from './interaction/home.controller.js';
import { LoginController } from './interaction/login.controller.js';
import { LoginService } from './interaction/login.service.js';
import { FailedSignIns } from './interaction/failed-sign-ins.js';
import { LoginSession } from './interaction/login-session.js';
import { PageRenderer } from './interaction/page-renderer.js';
import { Pages } from './interaction/pages.js';
import { IntrospectionController } from './introspection/introspection.controller.js';
import { TokenIntrospection } from './introspection/token-introspection.js';
import { LegacyGrantsWarning } from './legacy-grants/legacy-grants.warning.js';
import { ClientManagementAccess } from './registration/registration-access.js';
import { RegistrationService } from './registration/registration.service.js';
import { OAuthExceptionFilter } from './errors/oauth-exception.filter.js';
import { AccessModule } from '../access/access.module.js';
import { RegistrationController } from './registration/registration.controller.js';
import { RevocationController } from './revocation/revocation.controller.js';
import { MetadataController } from './metadata/metadata.controller.js';
import { MetadataService } from './metadata/metadata.service.js';
import { AuthenticationPolicy } from './authorize/authentication-policy.js';
import { EndSessionController } from './logout/end-session.controller.js';
import { EndSessionService } from './logout/end-session.service.js';
import { OpenIdModule } from '../openid/openid.module.js';
import { TokenController } from './token/token.controller.js';
import { ParController } from './par/par.controller.js';
import { ParService } from './par/par.service.js';
import { PushedRequestsModule } from '../pushed-requests/pushed-requests.module.js';
import { TokenEndpointService } from './token/token-endpoint.service.js';
import { CommonModule } from '../common/common.module.js';
import { AuditModule } from '../audit/audit.module.js';
import { MetricsModule } from '../metrics/metrics.module.js';
import { RateLimitModule } from '../rate-limit/rate-limit.module.js';
import { FactorsModule } from '../factors/factors.module.js';
import { SecondFactorController } from './interaction/second-factor.controller.js';
import { SecondFactorService } from './interaction/second-factor.service.js';
import { AccountFactorsService } from './interaction/account-factors.service.js';

/** The authorization server: authorization and token endpoints, login and consent, metadata. */
@Module({
  imports: [CommonModule, AuditModule, MetricsModule, RateLimitModule, PassportModule, AccessModule, UsersModule, SessionsModule, ClientsModule, CodesModule, TokensModule, ConsentsModule, ScopesModule, OpenIdModule, PushedRequestsModule, DpopModule, ReplayModule, ResourceServersModule, FactorsModule, TokenExchangeModule, DeviceCodesModule, IdentityProvidersModule, GroupsModule, AdminRolesModule],
  controllers: [EndSessionController, AuthorizeController, TokenController, ParController, DeviceAuthorizationController, RevocationController, IntrospectionController, RegistrationController, LoginController, SecondFactorController, HomeController, MetadataController],
  providers: [
    AuthorizationRequestValidator,
    GrantSignInLevel,
    AuthorizeService,
    AuthenticationPolicy,
    EndSessionService,
    LoginService,
    FailedSignIns,
    SecondFactorService,
    AccountFactorsService,
    LoginSession,
    Pages,
    PageRenderer,
    InteractionExceptionFilter,
    OAuthExceptionFilter,
    ClientBasicStrategy,
    ClientSecretPostStrategy,
    ClientNoneStrategy,
    ClientPrivateKeyJwtStrategy,
    ClientCredentialsVerifier,
    ClientAssertionVerifier,
    ClientJwksCache,
    ResourceIndicators,
    ClientDpopProof,
    JwtAccessTokens,
    ClientAuthenticationGuard,
    TokenIntrospection,
    TokenEndpointService,
    ParService,
    MetadataService,
    ClientManagementAccess,
    RegistrationService,
    LegacyGrantsWarning,
    AuthorizationCodeGrant,
    RefreshTokenGrant,
    ClientCredentialsGrant,
    PasswordGrant,
    TokenExchangeGrant,
    DeviceCodeGrant,
    DeviceAuthorizationService,
    {
      provide: GRANT_HANDLERS,
      inject: [AuthorizationCodeGrant, RefreshTokenGrant, ClientCredentialsGrant, PasswordGrant, TokenExchangeGrant, DeviceCodeGrant],
      useFactory: (...handlers: GrantHandler[]) => handlers,
    },
  ],
  // The sign-in session and the pages, for capabilities built on them in their own folders (passkeys/, account/).
  exports: [LoginSession, Pages, PageRenderer, AuthorizationRequestValidator],
})
export class AuthModule {}
