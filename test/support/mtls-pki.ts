/**
 * A throwaway PKI for the client-certificate tests, made with openssl in a temp directory: a private
 * CA, a server certificate it signs (localhost and 127.0.0.1), a client certificate it signs (key in
 * clear and encrypted with a passphrase), and a key that matches neither.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

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

const EC = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

export function makePki(): Pki {
  const dir = mkdtempSync(join(tmpdir(), 'outpost-mtls-'));
  const openssl = (args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
  const read = (name: string) => readFileSync(join(dir, name), 'utf8');
  try {
    openssl([
      'req',
      '-x509',
      ...EC,
      '-keyout',
      'ca.key',
      '-out',
      'ca.pem',
      '-days',
      '30',
      '-subj',
      '/CN=Outpost mTLS Test CA',
    ]);
    const leaf = (name: string, cn: string, ext: string) => {
      writeFileSync(join(dir, `${name}.ext`), `${ext}\nbasicConstraints=CA:FALSE\n`);
      openssl(['req', ...EC, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${cn}`]);
      openssl([
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
        '30',
        '-extfile',
        `${name}.ext`,
        '-out',
        `${name}.pem`,
      ]);
    };
    leaf('server', 'localhost', 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth');
    leaf('client', 'outpost-client', 'extendedKeyUsage=clientAuth');
    const passphrase = 'correct horse battery staple';
    openssl(['pkcs8', '-topk8', '-in', 'client.key', '-out', 'client-enc.key', '-passout', `pass:${passphrase}`]);
    openssl(['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-out', 'stray.key']);
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
