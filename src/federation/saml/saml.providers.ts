import { IdpMetadataCache } from './idp-metadata.cache.js';
import { SamlHandoffStore } from './saml-handoff.store.js';
import { SamlLogoutEndpoint } from './saml-logout.service.js';
import { SamlServiceProvider } from './saml-service-provider.js';
import { SamlSignIn } from './saml-sign-in.service.js';
import { SamlSingleLogout } from './saml-single-logout.js';

/**
 * The SAML half of FederationModule (which also needs ReplayModule and SessionsModule): the IdPs'
 * metadata, our service provider (UpstreamSignIn starts sign-ins with it) and Single Logout
 * (UpstreamSignOut sends the browser upstream with it), the handoffs between the ACS and the
 * browser's GET, and the services of our SAML endpoints, which hand verified people to
 * UpstreamSignIn and come back to UpstreamSignOut. One module, not two: UpstreamSignIn uses the
 * service provider and the ACS uses UpstreamSignIn; modules that import each other would be a cycle.
 */
export const SAML_PROVIDERS = [IdpMetadataCache, SamlServiceProvider, SamlSingleLogout, SamlHandoffStore, SamlSignIn, SamlLogoutEndpoint];
