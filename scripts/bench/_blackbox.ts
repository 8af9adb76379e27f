/**
 * Benchmark helpers for the protocol-check comparisons (api, tcp, dns, icmp): Debian's
 * prometheus-blackbox-exporter started with a temp config on 127.0.0.1, the agent's check engine in a
 * process of its own (_engine.ts), a closed-loop driver for blackbox_exporter (concurrent GET /probe at
 * the same concurrency), and the JSON line both make.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import type { CheckDefinition, CheckType } from '../../src/shared/checks/types.ts';
import { agentEnv, agentNodeFlags, buildDist } from './_dist.ts';
import { closedLoop, runEngine } from './_engine.ts';
import { freePort, spawnTool, stopChild, waitForPort } from './_proc.ts';
import { peakRssMb } from './_stats.ts';

export interface Blackbox {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/** Starts blackbox_exporter with modules http_2xx, tcp_connect, dns (the given query) and icmp. */
export async function startBlackbox(dns: { queryName: string; queryType: string } = { queryName: 'www.example.test', queryType: 'A' }): Promise<Blackbox> {
  const dir = mkdtempSync(join(tmpdir(), 'outpost-blackbox-'));
  const port = await freePort();
  writeFileSync(
    join(dir, 'blackbox.yml'),
    `modules:
  http_2xx:
    prober: http
    timeout: 5s
    http:
      preferred_ip_protocol: ip4
      valid_status_codes: [200]
  tcp_connect:
    prober: tcp
    timeout: 5s
    tcp:
      preferred_ip_protocol: ip4
  dns:
    prober: dns
    timeout: 5s
    dns:
      preferred_ip_protocol: ip4
      transport_protocol: udp
      query_name: ${dns.queryName}
      query_type: ${dns.queryType}
      valid_rcodes: [NOERROR]
  icmp:
    prober: icmp
    timeout: 5s
    icmp:
      preferred_ip_protocol: ip4
`,
  );
  const child = await spawnTool(
    'prometheus-blackbox-exporter',
    [`--config.file=${join(dir, 'blackbox.yml')}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=error'],
    'apt-get install prometheus-blackbox-exporter',
  );
  await waitForPort(port, child, 'blackbox_exporter');
  return {
    url: `http://127.0.0.1:${port}`,
    pid: child.pid!,
    async stop() {
      await stopChild(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface CompareOptions {
  concurrency: number;
  duration: number;
  /** The check the agent's engine runs, with its type (the runner is looked up as the daemon does). */
  checkType: CheckType;
  check: CheckDefinition;
  blackbox: Blackbox;
  module: string;
  target: string;
  /** What the ratio must reach (issue 3). */
  ratioTarget: number;
  workload: string;
}

/**
 * Runs the agent's workload, then blackbox_exporter's, each after a one-second warm-up; one JSON
 * object. The agent side runs in its own process from dist/ (_engine.ts), so its RSS is the engine's.
 */
export async function compare(o: CompareOptions): Promise<Record<string, unknown>> {
  const env = agentEnv();
  const engine = await runEngine({
    dist: buildDist(),
    checkType: o.checkType,
    check: o.check,
    concurrency: o.concurrency,
    durationSeconds: o.duration,
    warmupSeconds: 1,
    nodeFlags: agentNodeFlags(),
    env,
  });
  const { fpingProcesses, ...agent } = engine.result;

  // blackbox_exporter: the same probes, asked over HTTP at the same concurrency, from this process.
  const pool = new Pool(o.blackbox.url, { connections: o.concurrency, pipelining: 1 });
  const path = `/probe?module=${encodeURIComponent(o.module)}&target=${encodeURIComponent(o.target)}`;
  const bbProbe = async (): Promise<boolean> => {
    const res = await pool.request({ method: 'GET', path });
    const body = await res.body.text();
    return res.statusCode === 200 && /^probe_success 1$/m.test(body);
  };
  await closedLoop(o.concurrency, 1, bbProbe);
  const blackbox = await closedLoop(o.concurrency, o.duration, bbProbe);
  await pool.close();
  const blackboxPeakRssMb = peakRssMb(o.blackbox.pid);

  const ratio = Math.round((agent.probesPerSecond / blackbox.probesPerSecond) * 100) / 100;
  return {
    workload: o.workload,
    concurrency: o.concurrency,
    durationSeconds: o.duration,
    agent: { ...agent, baselineRssMb: engine.baselineRssMb, peakRssMb: engine.peakRssMb, nodeFlags: engine.nodeFlags, env },
    blackbox: { ...blackbox, peakRssMb: blackboxPeakRssMb, module: o.module, target: o.target },
    ratio,
    ...(fpingProcesses !== undefined ? { fpingProcesses } : {}),
    rssNote:
      'agent.peakRssMb is the VmHWM of a process that runs only the agent check engine, compiled (dist/), with the agent Node flags; agent.baselineRssMb is its VmRSS with its modules loaded, before the first check; blackbox.peakRssMb is the exporter process VmHWM',
    targets: {
      ratio: { want: `>= ${o.ratioTarget}`, met: ratio >= o.ratioTarget },
      peakRss: { want: '< 150 MB at concurrency 64', met: o.concurrency !== 64 ? null : engine.peakRssMb < 150 },
    },
  };
}

export interface Nginx {
  port: number;
  stop(): Promise<void>;
}

const JSON_LOCATION = `location / { default_type application/json; return 200 '{"ok":true}'; }`;

/**
 * nginx as a child process (one worker), answering a small JSON document on every path, or, given
 * `files`, serving them from a folder (`location` receives that folder and says how).
 */
export async function startNginx(opts: { files?: Record<string, Buffer | string>; location?: (root: string) => string } = {}): Promise<Nginx> {
  const dir = mkdtempSync(join(tmpdir(), 'outpost-bench-nginx-'));
  const port = await freePort();
  const root = join(dir, 'www');
  mkdirSync(root);
  for (const [name, bytes] of Object.entries(opts.files ?? {})) writeFileSync(join(root, name), bytes);
  writeFileSync(
    join(dir, 'nginx.conf'),
    `${process.getuid?.() === 0 ? 'user root root;' : ''}
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  server {
    listen 127.0.0.1:${port} backlog=4096;
    ${opts.location ? opts.location(root) : JSON_LOCATION}
  }
}
`,
  );
  const bin = ['/usr/sbin/nginx', '/usr/bin/nginx'].find((p) => {
    try {
      readFileSync(p);
      return true;
    } catch {
      return false;
    }
  });
  if (!bin) throw new Error('nginx is not installed (apt-get install nginx-light)');
  const child = spawn(bin, ['-p', dir, '-e', join(dir, 'error.log'), '-c', join(dir, 'nginx.conf'), '-g', 'daemon off;'], { stdio: 'ignore' });
  await waitForPort(port, child, 'nginx');
  return {
    port,
    async stop() {
      await stopChild(child, 'SIGQUIT');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
