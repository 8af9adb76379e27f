/**
 * Throwaway PKIs made with openssl: the CA and leaf primitives every TLS test builds on (makeCaCert,
 * signLeafCert), and `makePki`, the one the client-certificate tests use, in a temp directory: a private
 * CA, a server certificate it signs (localhost and 127.0.0.1), a client certificate it signs (key in clear
 * and encrypted with a passphrase), and a key that matches neither.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface CertFiles {
  cert: string;
  key: string;
}

export interface Pki {
  caCert: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
  /** The client key in PKCS#8, encrypted with `passphrase`. */
  clientKeyEncrypted: string;
  passphrase: string;
  /** A key that matches no certificate here. */
  strayKey: string;
}

/** Runs openssl in `dir`, where the files it reads and writes are. */
export const openssl = (dir: string, args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
/** A new P-256 key, unencrypted: what every certificate here is made with. */
export const EC = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

/** A self-signed CA with common name `cn`, valid for `days`: ca.pem and ca.key in `dir`. */
export function makeCaCert(dir: string, cn: string, days: number): CertFiles {
  openssl(dir, [
    'req',
    '-x509',
    ...EC,
    '-keyout',
    'ca.key',
    '-out',
    'ca.pem',
    '-days',
    String(days),
    '-subj',
    `/CN=${cn}`,
  ]);
  return { cert: join(dir, 'ca.pem'), key: join(dir, 'ca.key') };
}

/**
 * `name`.pem and `name`.key in `dir`: a leaf with common name `cn`, signed by the CA there (makeCaCert),
 * valid for `days` (-1: it expired yesterday), with the extensions `ext` (lines of an openssl extfile).
 */
export function signLeafCert(dir: string, name: string, cn: string, days: number, ext: string): CertFiles {
  writeFileSync(join(dir, `${name}.ext`), `${ext}\nbasicConstraints=CA:FALSE\n`);
  openssl(dir, ['req', ...EC, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${cn}`]);
  openssl(dir, [
    'x509',
    '-req',
    '-in',
    `${name}.csr`,
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-days',
    String(days),
    '-extfile',
    `${name}.ext`,
    '-out',
    `${name}.pem`,
  ]);
  return { cert: join(dir, `${name}.pem`), key: join(dir, `${name}.key`) };
}

export function makePki(): Pki {
  const dir = mkdtempSync(join(tmpdir(), 'outpost-mtls-'));
  const read = (name: string) => readFileSync(join(dir, name), 'utf8');
  try {
    makeCaCert(dir, 'Outpost mTLS Test CA', 30);
    signLeafCert(
      dir,
      'server',
      'localhost',
      30,
      'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth',
    );
    signLeafCert(dir, 'client', 'outpost-client', 30, 'extendedKeyUsage=clientAuth');
    const passphrase = 'correct horse battery staple';
    openssl(dir, ['pkcs8', '-topk8', '-in', 'client.key', '-out', 'client-enc.key', '-passout', `pass:${passphrase}`]);
    openssl(dir, ['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-out', 'stray.key']);
    return {
      caCert: read('ca.pem'),
      serverCert: read('server.pem'),
      serverKey: read('server.key'),
      clientCert: read('client.pem'),
      clientKey: read('client.key'),
      clientKeyEncrypted: read('client-enc.key'),
      passphrase,
      strayKey: read('stray.key'),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
