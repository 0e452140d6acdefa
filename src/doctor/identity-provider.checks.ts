import { createPrivateKey, X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { OutboundConfig } from '../config/outbound.config.js';
import { readSecretReference, type SecretReference } from '../config/secret-reference.js';
import type { IdentityProvider } from '../identity-providers/identity-provider.entity.js';
import { UPSTREAM_PROTOCOL, type OidcSettings, type SamlSettings } from '../identity-providers/identity-provider-settings.js';
import { getJsonWithHeaders, getText, OutboundAddressRefused, type OutboundOptions } from '../outbound/outbound-http.js';
import { fail, ok, warn, type CheckResult } from './check.js';

/** Each upstream call is given this long: a provider that does not answer within it would fail the sign-ins too. */
const TIMEOUT_MS = 5000;
/** As the sign-in reads a discovery document or a JWK Set (federation/oidc/upstream-openid-connect.ts). */
const MAX_JSON_BYTES = 256 * 1024;
/** openid-client compares an ID token's times with ours with 30 s of tolerance; beyond twice that, sign-ins are at risk. */
const CLOCK_WARN_MS = 60_000;
const DAY_MS = 24 * 60 * 60 * 1000;
/** A certificate expiring within this many days is a rollover to arrange with the IdP's administrator now. */
const CERTIFICATE_WARN_DAYS = 30;

type Status = 'ok' | 'warn' | 'fail';

/** One thing found about a provider; a provider's doctor entry is its findings, worst first in its status. */
interface Finding {
  status: Status;
  text: string;
  fix?: string;
}

const found = (status: Status, text: string, fix?: string): Finding => ({ status, text, fix });

/**
 * `idp:<id>`: each upstream identity provider (issue 45, "Operations"), enabled or not, as a sign-in
 * through it would meet it now: OpenID Connect discovery, the issuer it announces, its keys, its
 * clock and our client credentials; SAML metadata and its signing certificates' expiry. Every call
 * goes through the outbound guard with the server's settings, so a provider the guard refuses here
 * is refused at sign-in too. A secret is read to see that it is there, never printed.
 */
export async function identityProviderChecks(providers: readonly IdentityProvider[], outbound: OutboundConfig): Promise<CheckResult[]> {
  const options: OutboundOptions = { timeoutMs: TIMEOUT_MS, allowPrivateNetworks: outbound.allowPrivateNetworks, extraCa: outbound.extraCa };
  return Promise.all(providers.map(async (provider) => entry(provider, await findingsOf(provider, options))));
}

async function findingsOf(provider: IdentityProvider, options: OutboundOptions): Promise<Finding[]> {
  const settings = { ...provider.settings, protocol: provider.protocol };
  try {
    if (provider.protocol === UPSTREAM_PROTOCOL.OpenIdConnect) return await openIdConnectFindings(settings as unknown as OidcSettings, options);
    if (provider.protocol === UPSTREAM_PROTOCOL.Saml) return await samlFindings(settings as unknown as SamlSettings, options);
    return [found('fail', `its protocol ${JSON.stringify(provider.protocol)} is not one this version knows.`, `Delete it (idps:delete --id ${provider.id}) and create it again.`)];
  } catch (error) {
    return [found('fail', `checking it failed: ${(error as Error).message}.`, `Review its settings (idps:show --id ${provider.id}).`)];
  }
}

/** The worst finding decides. A disabled provider signs nobody in, so what would fail it is a warning until it is enabled. */
function entry(provider: IdentityProvider, findings: Finding[]): CheckResult {
  const worst: Status = findings.some((f) => f.status === 'fail') ? 'fail' : findings.some((f) => f.status === 'warn') ? 'warn' : 'ok';
  const protocol = provider.protocol === UPSTREAM_PROTOCOL.Saml ? 'SAML 2.0' : 'OpenID Connect';
  const state = provider.enabled ? 'enabled' : 'disabled: not offered, nobody signs in through it';
  const detail = `${provider.displayName} (${protocol}, ${state}): ${findings.map((f) => f.text).join(' ')}`;
  const id = `idp:${provider.id}`;
  if (worst === 'ok') return ok(id, detail);
  const fixes = findings.flatMap((f) => (f.status !== 'ok' && f.fix ? [f.fix] : []));
  const fix = [...new Set(fixes)].join(' ');
  if (worst === 'warn') return warn(id, detail, fix);
  return provider.enabled ? fail(id, detail, fix) : warn(id, detail, `${fix} Until then, leave it disabled.`);
}

/** OpenID Connect Discovery §4: the configuration, its issuer (§4.3), its JWK Set; then the clock and our credentials. */
async function openIdConnectFindings(settings: OidcSettings, options: OutboundOptions): Promise<Finding[]> {
  const findings: Finding[] = [];
  // §4.1: any terminating "/" of the issuer is removed before the well-known path is appended.
  const discoveryUrl = `${settings.issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
  const sentAt = Date.now();
  let answer: Awaited<ReturnType<typeof getJsonWithHeaders>>;
  try {
    answer = await getJsonWithHeaders(discoveryUrl, MAX_JSON_BYTES, options);
  } catch (error) {
    return [unreachable(discoveryUrl, error), credentialsFinding(settings)];
  }
  const metadata = answer.json as { issuer?: unknown; jwks_uri?: unknown } | undefined;
  if (answer.status !== 200 || typeof metadata !== 'object' || metadata === null || Array.isArray(metadata)) {
    const what = answer.status === 200 ? 'with no JSON document' : `${answer.status}`;
    return [found('fail', `${discoveryUrl} answers ${what}, not its discovery document.`, 'Check the issuer URL with the provider\'s documentation (idps:update --issuer): it is the "issuer" of its discovery document.'), credentialsFinding(settings)];
  }
  // openid-client compares them as URLs (a host's case, a root path's "/"), then holds ID tokens and RFC 9207's iss to the announced one.
  if (typeof metadata.issuer !== 'string' || !sameUrl(metadata.issuer, settings.issuer)) {
    findings.push(
      found(
        'fail',
        `${discoveryUrl} announces the issuer ${JSON.stringify(metadata.issuer)}, but the provider is configured with ${settings.issuer}: every sign-in would be refused (OpenID Connect Discovery §4.3).`,
        `If the announced issuer is the provider you mean, configure exactly that: idps:update --issuer ${typeof metadata.issuer === 'string' ? metadata.issuer : 'URL'}.`,
      ),
    );
  } else {
    findings.push(found('ok', `${discoveryUrl} answers, announcing the issuer as configured.`));
  }
  findings.push(await keysFinding(metadata.jwks_uri, options));
  findings.push(clockFinding(answer.headers.date, sentAt, Date.now()));
  findings.push(credentialsFinding(settings));
  return findings;
}

function unreachable(url: string, error: unknown): Finding {
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: string }).code ?? '';
  let fix = "Check the URL (idps:show), DNS, and the firewall between this host and the provider: the instances must reach it too.";
  if (error instanceof OutboundAddressRefused) fix = 'The provider is on a private or loopback address, which outgoing requests may not reach: set OUTBOUND_ALLOW_PRIVATE_NETWORKS=true if it is meant to be inside your network.';
  else if (/CERT|SSL|TLS/i.test(`${code} ${message}`)) fix = "The provider's TLS certificate is not trusted here: if your company's CA issued it, name that CA in OUTBOUND_EXTRA_CA_FILE.";
  return found('fail', `${url} cannot be reached (${message}).`, fix);
}

function sameUrl(a: string, b: string): boolean {
  try {
    return new URL(a).href === new URL(b).href;
  } catch {
    return false;
  }
}

/** The JWK Set the ID tokens are checked with: at least one public key for signatures, and nothing private in it. */
async function keysFinding(jwksUri: unknown, options: OutboundOptions): Promise<Finding> {
  const fix = "The provider's discovery document must name a jwks_uri serving its public signing keys (OpenID Connect Discovery §3); ask its administrator.";
  if (typeof jwksUri !== 'string') return found('fail', 'The discovery document names no jwks_uri: no ID token could be checked.', fix);
  let answer: Awaited<ReturnType<typeof getJsonWithHeaders>>;
  try {
    answer = await getJsonWithHeaders(jwksUri, MAX_JSON_BYTES, options);
  } catch (error) {
    return unreachable(jwksUri, error);
  }
  const keys = (answer.json as { keys?: unknown } | undefined)?.keys;
  if (answer.status !== 200 || !Array.isArray(keys)) return found('fail', `${jwksUri} answers ${answer.status} without a JWK Set.`, fix);
  const usable = (keys as Record<string, unknown>[]).filter((key) => typeof key === 'object' && key !== null && ['RSA', 'EC', 'OKP'].includes(key.kty as string) && (key.use === undefined || key.use === 'sig'));
  // RFC 7517 §5: a JWK Set published for verification holds public keys; a "d" is a private key given to everyone.
  if (usable.some((key) => key.d !== undefined)) return found('fail', `${jwksUri} publishes a private key: anyone can sign ID tokens as this provider.`, 'Tell the provider\'s administrator at once, and disable it (idps:update --disable) until its keys are replaced.');
  if (usable.length === 0) return found('fail', `${jwksUri} holds no signing key (${keys.length} key(s), none RSA, EC or OKP for "sig").`, fix);
  return found('ok', `Its JWK Set holds ${usable.length} signing key(s).`);
}

/** RFC 9110 §6.6.1: the Date header is the origin's clock at the answer, to the second; compared with the middle of our request. */
function clockFinding(date: string | string[] | undefined, sentAt: number, receivedAt: number): Finding {
  const theirs = typeof date === 'string' ? Date.parse(date) : NaN;
  if (Number.isNaN(theirs)) return found('ok', 'It sends no Date header, so its clock is not compared.');
  const skew = theirs - (sentAt + receivedAt) / 2;
  const seconds = Math.round(Math.abs(skew) / 1000);
  const text = `Its clock is ${seconds} s ${skew > 0 ? 'ahead of' : 'behind'} this host's.`;
  if (Math.abs(skew) <= CLOCK_WARN_MS) return found('ok', text);
  return found('warn', `${text} ID tokens' times (exp, iat, auth_time) are compared with 30 s of tolerance: sign-ins may be refused as expired or not yet valid.`, 'Run NTP (chrony, systemd-timesyncd) on this host and the instances; if they agree with a time server, tell the provider\'s administrator.');
}

/** The secret or key a token request authenticates with: its reference resolves (never its value shown). */
function credentialsFinding(settings: OidcSettings): Finding {
  const auth = settings.clientAuth;
  if (auth.method === 'none') return found('ok', 'It is used as a public client (no client authentication).');
  const what = auth.method === 'private_key_jwt' ? 'private key' : 'client secret';
  const reference = auth.method === 'private_key_jwt' ? auth.key : auth.secret;
  const fix = `Set it where every instance reads it (the ${what} the provider issued), or point the provider at another: idps:update --${auth.method === 'private_key_jwt' ? 'private-key-env or --private-key-file' : 'client-secret-env or --client-secret-file'}.`;
  const read = readSecretReference(reference, process.cwd());
  if ('problem' in read) return found('fail', `Its ${what} cannot be read: ${read.problem}.`, fix);
  if (auth.method === 'private_key_jwt' && !isPrivateKey(read.secret)) return found('fail', `Its private key (${named(reference)}) is neither a private JWK nor a PKCS#8 PEM.`, fix);
  return found('ok', `Its ${what} (${named(reference)}) is there.`);
}

function isPrivateKey(text: string): boolean {
  try {
    createPrivateKey(text.trimStart().startsWith('{') ? { key: JSON.parse(text) as Record<string, unknown> & { kty: string }, format: 'jwk' } : text);
    return true;
  } catch {
    return false;
  }
}

function named(reference: SecretReference): string {
  return 'env' in reference ? `environment variable ${reference.env}` : `file ${reference.file}`;
}

/** SAML Metadata §2.4.3: the IdP's metadata as the sign-in reads it, and the certificates that sign its answers; then our SP key and certificate, when configured. */
async function samlFindings(settings: SamlSettings, options: OutboundOptions): Promise<Finding[]> {
  // Loaded only when a SAML provider is configured: the XML parser is the SAML module's.
  const { MAX_METADATA_BYTES, parseIdpMetadata } = await import('../federation/saml/idp-metadata.js');
  let xml: string;
  if (settings.metadataUrl !== null) {
    try {
      const answer = await getText(settings.metadataUrl, MAX_METADATA_BYTES, { ...options, accept: 'application/samlmetadata+xml, application/xml, text/xml' });
      if (answer.status !== 200) return [found('fail', `${settings.metadataUrl} answers ${answer.status}, not the IdP's metadata.`, 'Check the metadata URL with the IdP\'s administrator (idps:update --metadata-url), or give a copy with --metadata-file.')];
      xml = answer.text;
    } catch (error) {
      return [unreachable(settings.metadataUrl, error)];
    }
  } else {
    try {
      xml = await readFile(settings.metadataFile!, 'utf8');
    } catch (error) {
      return [found('fail', `The metadata file ${settings.metadataFile} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'}).`, 'Put the IdP\'s metadata there, readable by the instances, or give another with idps:update --metadata-file.')];
    }
  }
  let certificates: string[];
  try {
    certificates = parseIdpMetadata(xml).signingCertificates;
  } catch (error) {
    return [found('fail', `Its metadata is refused: ${(error as Error).message}.`, 'Download the metadata again from the IdP; it must describe one SAML 2.0 IdP with a signing certificate.')];
  }
  const findings = [found('ok', `Its metadata (${settings.metadataUrl ?? settings.metadataFile}) reads.`), certificatesFinding('Its signing certificate', certificates, "Ask the IdP's administrator for its new certificate and metadata (a rollover publishes the next one beside the current), then read the metadata again.")];
  if (settings.spSigningKey !== null && settings.spSigningCertificate !== null) findings.push(...ourSigningFindings(settings.spSigningKey, settings.spSigningCertificate));
  return findings;
}

/** Expired: answers signed with it are a risk to refuse, and the IdP will replace it at any moment. Within 30 days: a rollover to arrange. */
function certificatesFinding(what: string, pems: string[], fix: string): Finding {
  const now = Date.now();
  const certificates = pems.map((pem) => new X509Certificate(pem));
  const until = (c: X509Certificate): number => Date.parse(c.validTo);
  const latest = certificates.reduce((a, b) => (until(b) > until(a) ? b : a));
  const day = (c: X509Certificate): string => new Date(until(c)).toISOString().slice(0, 10);
  const subject = (c: X509Certificate): string => c.subject.replace(/\n/g, ', ');
  if (until(latest) <= now) return found('fail', `${what} (${subject(latest)}) expired on ${day(latest)}.`, fix);
  const days = Math.floor((until(latest) - now) / DAY_MS);
  if (days < CERTIFICATE_WARN_DAYS) return found('warn', `${what} (${subject(latest)}) expires on ${day(latest)}, in ${days} day(s).`, fix);
  const expired = certificates.filter((c) => until(c) <= now);
  if (expired.length > 0) return found('warn', `${what}s: one is valid until ${day(latest)}, but ${expired.map((c) => `${subject(c)} expired on ${day(c)}`).join(', ')}.`, fix);
  return found('ok', `${what}${certificates.length > 1 ? 's are' : ' is'} valid until ${day(latest)}.`);
}

/** Our SP's signing key and certificate (signed AuthnRequests and LogoutRequests): both references resolve, and the certificate's expiry. */
function ourSigningFindings(keyReference: SecretReference, certificateReference: SecretReference): Finding[] {
  const fix = 'Set both where every instance reads them, or give others with idps:update; after a new certificate, the IdP must import our metadata again.';
  const key = readSecretReference(keyReference, process.cwd());
  const certificate = readSecretReference(certificateReference, process.cwd());
  const problems = [...('problem' in key ? [`our SP signing key: ${key.problem}`] : []), ...('problem' in certificate ? [`our SP certificate: ${certificate.problem}`] : [])];
  if (problems.length > 0) return [found('fail', `${problems.join('; ')}.`, fix)];
  if ('secret' in key && !isPrivateKey(key.secret)) return [found('fail', `Our SP signing key (${named(keyReference)}) is not a PKCS#8 PEM private key.`, fix)];
  try {
    return [certificatesFinding('Our SP certificate', ['secret' in certificate ? certificate.secret : ''], fix)];
  } catch {
    return [found('fail', `Our SP certificate (${named(certificateReference)}) is not a PEM certificate.`, fix)];
  }
}
