/**
 * Targets for the SSL monitor tests: certificates made with openssl for each test file (a test CA and
 * leaves it signs, plus a self-signed one), and Debian's nginx serving them on loopback, one server
 * block per port, started in a single foreground process with a temp prefix.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SslCheckDefinition, SslConfig } from '../../src/shared/checks/monitors.ts';
import { uptimeCheckBase } from '../support/check-definition.ts';
import { freePorts } from '../support/loopback-port.ts';
import { type CertFiles, EC, makeCaCert, openssl, signLeafCert } from '../support/mtls-pki.ts';
import { runNginx } from './tcp-servers.ts';

export const CA_NAME = 'Outpost Test CA';

/** A CA whose certificate the test trusts (tls.setDefaultCACertificates), in `dir`. */
export function makeCa(dir: string): CertFiles & { pem: string } {
  const ca = makeCaCert(dir, CA_NAME, 365);
  return { ...ca, pem: readFileSync(ca.cert, 'utf8') };
}

/** A leaf for `dnsName`, signed by the CA, valid for `days` from now (-1: it expired yesterday). */
export function makeLeaf(dir: string, name: string, dnsName: string, days: number): CertFiles {
  return signLeafCert(dir, name, dnsName, days, `subjectAltName=DNS:${dnsName}`);
}

/** A self-signed certificate for `dnsName` (no CA vouches for it). */
export function makeSelfSignedLeaf(dir: string, name: string, dnsName: string): CertFiles {
  openssl(dir, [
    'req',
    '-x509',
    ...EC,
    '-keyout',
    `${name}.key`,
    '-out',
    `${name}.pem`,
    '-days',
    '90',
    '-subj',
    `/CN=${dnsName}`,
    '-addext',
    `subjectAltName=DNS:${dnsName}`,
  ]);
  return { cert: join(dir, `${name}.pem`), key: join(dir, `${name}.key`) };
}

export interface TlsSite {
  files: CertFiles;
  /** nginx's ssl_protocols; default TLSv1.2 TLSv1.3. */
  protocols?: string;
}

export interface TlsNginx {
  ports: Record<string, number>;
  stop(): Promise<void>;
}

/** nginx with one TLS server block per site, each on its own loopback port. */
export async function startTlsNginx(sites: Record<string, TlsSite>): Promise<TlsNginx> {
  const dir = mkdtempSync(join(tmpdir(), 'outpost-nginx-ssl-'));
  const picked = await freePorts(Object.keys(sites).length);
  const ports: Record<string, number> = {};
  const servers: string[] = [];
  for (const [i, [name, site]] of Object.entries(sites).entries()) {
    ports[name] = picked[i] as number;
    servers.push(`server {
    listen 127.0.0.1:${ports[name]} ssl;
    ssl_certificate ${site.files.cert};
    ssl_certificate_key ${site.files.key};
    ssl_protocols ${site.protocols ?? 'TLSv1.2 TLSv1.3'};
    location / { default_type text/plain; return 200 "${name}\\n"; }
  }`);
  }
  const nginx = await runNginx(dir, servers, Object.values(ports));
  return { ports, stop: nginx.stop };
}

/** An SSL monitor's definition with the reference defaults; `config` overrides sslConfig. */
export function sslCheck(
  config: Partial<SslConfig> & { port: number },
  extra: Partial<SslCheckDefinition> = {},
): SslCheckDefinition {
  return {
    ...uptimeCheckBase('SSL', { id: 'chk_ssl', accountId: 'acc_test', name: 'ssl test' }, 3000, 10000),
    ...extra,
    request: {
      assertions: [],
      ...extra.request,
      sslConfig: {
        hostname: '127.0.0.1',
        serverName: null,
        ipFamily: 'IPv4',
        skipChainValidation: false,
        handshakeTimeoutMs: 10000,
        alertDaysBeforeExpiry: 20,
        securityBaseline: {
          enabled: true,
          minTLSVersion: { value: 'TLS1.2', severity: 'fail' },
          minKeySizeBits: { value: 2048, severity: 'fail' },
          weakSignatureAlgorithm: { severity: 'fail' },
          weakCipherSuite: { severity: 'fail' },
          recommendedTLSVersion: { value: 'TLS1.3', severity: 'ignore' },
          recommendedKeySizeBits: { value: 3072, severity: 'ignore' },
        },
        ...config,
      },
    },
  };
}
