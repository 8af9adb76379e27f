/**
 * The agent's connection to the service the way locked-down networks build it: the service behind a
 * TLS-terminating nginx whose certificate comes from a private CA (trusted only through
 * NODE_EXTRA_CA_CERTS), reached through an authenticating forward proxy (tinyproxy, HTTPS_PROXY).
 * Both are Debian's own servers on loopback, started by the test.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/loopback-port.ts';
import { Api, createAccount, type Proc, startAgent, startService, startTarget, tempDir, until } from './harness.ts';

const PROXY_USER = 'outpost';
const PROXY_PASS = 'pr0xy-s3cret-pass';

/** Resolves once something accepts TCP connections on the port. */
async function listening(port: number): Promise<void> {
  await until(
    () =>
      new Promise<true | undefined>((resolve) => {
        const socket = net.connect(port, '127.0.0.1');
        socket.once('connect', () => {
          socket.destroy();
          resolve(true);
        });
        socket.once('error', () => resolve(undefined));
      }),
    { timeoutMs: 10_000, everyMs: 50, what: `a listener on port ${port}` },
  );
}

function makeCertificates(dir: string): { ca: string; cert: string; key: string } {
  const f = (name: string) => path.join(dir, name);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'ignore' });
  openssl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    f('ca.key'),
    '-out',
    f('ca.pem'),
    '-days',
    '2',
    '-subj',
    '/CN=Outpost Test CA',
  );
  openssl(
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    f('server.key'),
    '-out',
    f('server.csr'),
    '-subj',
    '/CN=localhost',
  );
  writeFileSync(f('san.ext'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\n');
  openssl(
    'x509',
    '-req',
    '-in',
    f('server.csr'),
    '-CA',
    f('ca.pem'),
    '-CAkey',
    f('ca.key'),
    '-CAcreateserial',
    '-out',
    f('server.pem'),
    '-days',
    '2',
    '-extfile',
    f('san.ext'),
  );
  return { ca: f('ca.pem'), cert: f('server.pem'), key: f('server.key') };
}

describe('agent to service over TLS from a private CA, through an authenticating proxy', () => {
  let data: Awaited<ReturnType<typeof tempDir>>;
  let service: { proc: Proc; url: string };
  let nginx: ChildProcess;
  let tinyproxy: ChildProcess;
  let tlsPort: number;
  let proxyPort: number;
  let certs: ReturnType<typeof makeCertificates>;
  let api: Api;
  let locationKey: string;
  const agents: Proc[] = [];

  beforeAll(async () => {
    data = await tempDir('e2e-tls');
    certs = makeCertificates(data.dir);
    service = await startService({ DATA_DIR: data.dir });
    api = new Api(service.url, await createAccount(data.dir));
    locationKey = (await api.createLocation('behind-proxy')).key;

    tlsPort = await freePort();
    const conf = path.join(data.dir, 'nginx.conf');
    writeFileSync(
      conf,
      `daemon off;
pid ${data.dir}/nginx.pid;
error_log ${data.dir}/nginx-error.log;
events {}
http {
  access_log off;
  client_body_temp_path ${data.dir}/nginx-body;
  proxy_temp_path ${data.dir}/nginx-proxy;
  server {
    listen 127.0.0.1:${tlsPort} ssl;
    ssl_certificate ${certs.cert};
    ssl_certificate_key ${certs.key};
    location / {
      proxy_pass ${service.url};
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_buffering off;
      # Lease requests are long-polls.
      proxy_read_timeout 120s;
    }
  }
}
`,
    );
    nginx = spawn('nginx', ['-p', data.dir, '-c', conf], { stdio: 'ignore' });
    await listening(tlsPort);

    proxyPort = await freePort();
    const proxyConf = path.join(data.dir, 'tinyproxy.conf');
    writeFileSync(
      proxyConf,
      `Port ${proxyPort}
Listen 127.0.0.1
Timeout 120
MaxClients 50
Allow 127.0.0.1
BasicAuth ${PROXY_USER} ${PROXY_PASS}
ConnectPort ${tlsPort}
LogLevel Connect
LogFile "${data.dir}/tinyproxy.log"
`,
    );
    tinyproxy = spawn('tinyproxy', ['-d', '-c', proxyConf], { stdio: 'ignore' });
    await listening(proxyPort);
  });

  afterAll(async () => {
    for (const agent of agents) await agent.stop('SIGKILL');
    nginx?.kill('SIGTERM');
    tinyproxy?.kill('SIGTERM');
    await service?.proc.stop();
    await data?.remove();
  });

  it('registers, runs a check and delivers its result through the proxy, never logging the proxy password', async () => {
    const target = await startTarget((_req, res) => res.writeHead(204).end());
    try {
      const agent = startAgent({
        API_KEY: locationKey,
        API_URL: `https://localhost:${tlsPort}`,
        NODE_EXTRA_CA_CERTS: certs.ca,
        HTTPS_PROXY: `http://${PROXY_USER}:${PROXY_PASS}@127.0.0.1:${proxyPort}`,
        SPOOL_DIR: `${data.dir}/spool-ok`,
      });
      agents.push(agent);
      await agent.waitForLog((l) => l.msg === 'registered; taking work');
      const check = await api.createApiCheck({
        name: 'via proxy',
        frequency: 1440,
        privateLocations: ['behind-proxy'],
        request: { method: 'GET', url: target.url },
      });
      const [result] = await until(
        async () => {
          const r = await api.results(check.id);
          return r.length > 0 ? r : undefined;
        },
        { what: 'a result delivered through the proxy' },
      );
      expect(result).toMatchObject({ hasFailures: false });
      // The agent's calls went through tinyproxy as CONNECT tunnels to nginx.
      expect(readFileSync(path.join(data.dir, 'tinyproxy.log'), 'utf8')).toMatch(
        new RegExp(`CONNECT localhost:${tlsPort}`),
      );
      const logs = JSON.stringify(agent.lines) + agent.stderr.join('\n');
      expect(logs).not.toContain(PROXY_PASS);
      expect(logs).not.toContain(locationKey);
    } finally {
      await target.close();
    }
  });

  it('without the private CA it does not get in, says why, and stays alive but not ready', async () => {
    const agent = startAgent({
      API_KEY: locationKey,
      API_URL: `https://localhost:${tlsPort}`,
      SPOOL_DIR: `${data.dir}/spool-noca`,
    });
    agents.push(agent);
    const probes = await agent.waitForLog((l) => l.msg === 'probes listening');
    const warning = await agent.waitForLog((l) => l.msg === 'could not register with the service; retrying');
    expect(JSON.stringify(warning)).toMatch(/certificate/i);
    const readiness = await request(`http://127.0.0.1:${probes.port}/-/readiness`);
    expect(readiness.statusCode).toBe(503);
    await readiness.body.dump();
    const liveness = await request(`http://127.0.0.1:${probes.port}/-/liveness`);
    expect(liveness.statusCode).toBe(200);
    await liveness.body.dump();
  });
});
