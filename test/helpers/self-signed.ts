import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface SelfSigned {
  certFile: string;
  keyFile: string;
  cert: string;
}

/**
 * A fresh self-signed certificate for 127.0.0.1 and localhost, made with Debian's openssl, so no
 * private key is ever committed. Only for tests that need a real TLS handshake.
 */
export function makeSelfSignedCertificate(): SelfSigned {
  const dir = mkdtempSync(join(tmpdir(), 'latchkey-tls-'));
  const certFile = join(dir, 'cert.pem');
  const keyFile = join(dir, 'key.pem');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', keyFile, '-out', certFile, '-days', '2',
    '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost'], { stdio: 'ignore' });
  return { certFile, keyFile, cert: readFileSync(certFile, 'utf8') };
}
