/**
 * Targets for the SSL monitor tests: certificates made with openssl for each test file (a test CA and
 * leaves it signs, plus a self-signed one), and Debian's nginx serving them on loopback, one server
 * block per port, started in a single foreground process with a temp prefix.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SslCheckDefinition, SslConfig } from '../../src/shared/checks/monitors.ts';
import { freePort } from './dns-server.ts';

export const CA_NAME = 'Outpost Test CA';

export interface CertFiles {
  cert: string;
  key: string;
}

const openssl = (dir: string, args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
const EC = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

/** A CA whose certificate the test trusts (tls.setDefaultCACertificates), in `dir`. */
export function makeCa(dir: string): CertFiles & { pem: string } {
  openssl(dir, ['req', '-x509', ...EC, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '365', '-subj', `/CN=${CA_NAME}`]);
  return { cert: join(dir, 'ca.pem'), key: join(dir, 'ca.key'), pem: readFileSync(join(dir, 'ca.pem'), 'utf8') };
}

/** A leaf for `dnsName`, signed by the CA, valid for `days` from now (-1: it expired yesterday). */
export function makeLeaf(dir: string, name: string, dnsName: string, days: number): CertFiles {
  const ext = join(dir, `${name}.ext`);
  writeFileSync(ext, `subjectAltName=DNS:${dnsName}\nbasicConstraints=CA:FALSE\n`);
  openssl(dir, ['req', ...EC, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${dnsName}`]);
  openssl(dir, ['x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-days', String(days), '-extfile', ext, '-out', `${name}.pem`]);
  return { cert: join(dir, `${name}.pem`), key: join(dir, `${name}.key`) };
}

/** A self-signed certificate for `dnsName` (no CA vouches for it). */
export function makeSelfSignedLeaf(dir: string, name: string, dnsName: string): CertFiles {
  openssl(dir, ['req', '-x509', ...EC, '-keyout', `${name}.key`, '-out', `${name}.pem`, '-days', '90', '-subj', `/CN=${dnsName}`, '-addext', `subjectAltName=DNS:${dnsName}`]);
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

function nginxPath(): string {
  for (const candidate of ['/usr/sbin/nginx', '/usr/bin/nginx']) {
    try {
      execFileSync(candidate, ['-v'], { stdio: 'ignore' });
      return candidate;
    } catch {}
  }
  throw new Error('nginx is not installed (apt-get install nginx-light; .ci/run does this)');
}

function connectsOnce(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ host: '127.0.0.1', port }, () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

/** nginx with one TLS server block per site, each on its own loopback port. */
export async function startTlsNginx(sites: Record<string, TlsSite>): Promise<TlsNginx> {
  const dir = mkdtempSync(join(tmpdir(), 'outpost-nginx-ssl-'));
  const ports: Record<string, number> = {};
  const servers: string[] = [];
  for (const [name, site] of Object.entries(sites)) {
    ports[name] = await freePort();
    servers.push(`server {
    listen 127.0.0.1:${ports[name]} ssl;
    ssl_certificate ${site.files.cert};
    ssl_certificate_key ${site.files.key};
    ssl_protocols ${site.protocols ?? 'TLSv1.2 TLSv1.3'};
    location / { default_type text/plain; return 200 "${name}\\n"; }
  }`);
  }
  writeFileSync(
    join(dir, 'nginx.conf'),
    `daemon off;
master_process off;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log;
events { worker_connections 64; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  ${servers.join('\n  ')}
}
`,
  );
  const child: ChildProcess = spawn(nginxPath(), ['-p', dir, '-e', join(dir, 'error.log'), '-c', join(dir, 'nginx.conf')], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (c: Buffer) => {
    stderr += c.toString();
  });
  const exited = new Promise<never>((_, reject) => child.once('exit', (code) => reject(new Error(`nginx exited (${code}) before it listened:\n${stderr}`))));
  exited.catch(() => {});
  // nginx prints nothing when ready; every port accepting a connection is the event to wait for.
  const listening = (async () => {
    for (const port of Object.values(ports)) while (!(await connectsOnce(port))) await new Promise((r) => setTimeout(r, 20));
  })();
  await Promise.race([listening, exited]);
  return {
    ports,
    async stop() {
      if (child.exitCode === null) {
        const done = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await done;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** An SSL monitor's definition with the reference defaults; `config` overrides sslConfig. */
export function sslCheck(config: Partial<SslConfig> & { port: number }, extra: Partial<SslCheckDefinition> = {}): SslCheckDefinition {
  return {
    id: 'chk_ssl',
    accountId: 'acc_test',
    name: 'ssl test',
    checkType: 'SSL',
    shouldFail: false,
    runtimeId: null,
    degradedResponseTime: 3000,
    maxResponseTime: 10000,
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
