import { createPrivateKey, X509Certificate } from 'node:crypto';
import { readSecretReference } from '../../config/secret-reference.js';
import type { SamlSettings, UpstreamProvider } from '../../identity-providers/identity-provider-settings.js';
import { UpstreamFailure } from '../upstream-failure.js';

/**
 * Our SP's signing key and certificate for one provider, read where the settings say (a rotated
 * file applies without a restart), or null when none is configured: then our AuthnRequests go
 * unsigned (SAML Bindings §3.4.4.1 lets them) and Single Logout works only with IdPs that accept
 * an unsigned LogoutRequest (Entra ID does).
 */
export function spSigningOptions(provider: UpstreamProvider, settings: SamlSettings): { privateKey: string; publicCert: string } | null {
  if (settings.spSigningKey === null || settings.spSigningCertificate === null) return null;
  const read = (reference: NonNullable<SamlSettings['spSigningKey']>, what: string): string => {
    const value = readSecretReference(reference, process.cwd());
    if ('problem' in value) throw new UpstreamFailure(provider, 'misconfigured', `the SP signing ${what}: ${value.problem}`);
    return value.secret;
  };
  const privateKey = read(settings.spSigningKey, 'key');
  const publicCert = read(settings.spSigningCertificate, 'certificate');
  try {
    const key = createPrivateKey(privateKey);
    if (!new X509Certificate(publicCert).checkPrivateKey(key)) throw new Error('the certificate is not the key’s');
  } catch (error) {
    throw new UpstreamFailure(provider, 'misconfigured', `the SP signing key and certificate: ${(error as Error).message}`);
  }
  return { privateKey, publicCert };
}
