import { InitialSchema1763800000000 } from './1763800000000-initial-schema.js';
import { Items1763900000000 } from './1763900000000-items.js';
import { RegistrationAndAudit1764000000000 } from './1764000000000-registration-and-audit.js';
import { MacTokens1764100000000 } from './1764100000000-mac-tokens.js';
import { SessionsAndClientMetadata1764200000000 } from './1764200000000-sessions-and-client-metadata.js';
import { OpenIdConnect1764300000000 } from './1764300000000-openid-connect.js';
import { PushedAuthorizationRequests1764400000000 } from './1764400000000-pushed-authorization-requests.js';
import { Dpop1764500000000 } from './1764500000000-dpop.js';
import { PrivateKeyJwt1764600000000 } from './1764600000000-private-key-jwt.js';
import { ResourceIndicators1764700000000 } from './1764700000000-resource-indicators.js';
import { DpopCodeBinding1764800000000 } from './1764800000000-dpop-code-binding.js';
import { ResourceServerIntrospector1764900000000 } from './1764900000000-resource-server-introspector.js';
import { ChangeNotifications1765000000000 } from './1765000000000-change-notifications.js';
import { SecondFactors1766000000000 } from './1766000000000-second-factors.js';
import { Passkeys1766100000000 } from './1766100000000-passkeys.js';
import { TokenExchange1766200000000 } from './1766200000000-token-exchange.js';
import { DeviceAuthorizations1766300000000 } from './1766300000000-device-authorizations.js';
import { ResponseTypes1766400000000 } from './1766400000000-response-types.js';
import { RefreshSuccessor1766500000000 } from './1766500000000-refresh-successor.js';
import { IdempotencyKeys1766500100000 } from './1766500100000-idempotency-keys.js';
import { ClientMinimumAcr1766600000000 } from './1766600000000-client-minimum-acr.js';
import { PasskeyClonedAt1766600100000 } from './1766600100000-passkey-cloned-at.js';
import { IdentityProviders1766700000000 } from './1766700000000-identity-providers.js';
import { SamlHandoffs1766700200000 } from './1766700200000-saml-handoffs.js';

/** Every migration, in order. */
export const MIGRATIONS = [InitialSchema1763800000000, Items1763900000000, RegistrationAndAudit1764000000000, MacTokens1764100000000, SessionsAndClientMetadata1764200000000, OpenIdConnect1764300000000, PushedAuthorizationRequests1764400000000, Dpop1764500000000, PrivateKeyJwt1764600000000, ResourceIndicators1764700000000, DpopCodeBinding1764800000000, ResourceServerIntrospector1764900000000, ChangeNotifications1765000000000, SecondFactors1766000000000, Passkeys1766100000000, TokenExchange1766200000000, DeviceAuthorizations1766300000000, ResponseTypes1766400000000, RefreshSuccessor1766500000000, IdempotencyKeys1766500100000, ClientMinimumAcr1766600000000, PasskeyClonedAt1766600100000, IdentityProviders1766700000000, SamlHandoffs1766700200000];
