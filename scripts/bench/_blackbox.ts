/**
 * Benchmark helpers for the protocol-check comparisons (api, tcp, dns, icmp): Debian's
 * prometheus-blackbox-exporter started with a temp config on 127.0.0.1, the agent's check engine in a
 * process of its own (_engine.ts), two closed-loop drivers for blackbox_exporter (concurrent GET /probe
 * at the same concurrency: this process's and wrk's), and the JSON line they make.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import type { CheckDefinition, CheckType } from '../../src/shared/checks/types.ts';
import { agentEnv, agentNodeFlags, buildDist } from './_dist.ts';
import { closedLoop, runEngine, type SideResult } from './_engine.ts';
import { cleanUpOnExit, freePort, spawnTool, stopChild, waitForPort } from './_proc.ts';
import { nginxConfig } from '../../test/agent/tcp-servers.ts';
import { peakRssMb } from './_stats.ts';
import { findTool, missingTool, requireTools, TOOLS } from './_tools.ts';
import { runWrk, WRK_COUNTED_DONE_LUA } from './_wrk.ts';

export interface Blackbox {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/** Starts blackbox_exporter with modules http_2xx, tcp_connect, dns (the given query) and icmp. */
export async function startBlackbox(
  dns: { queryName: string; queryType: string } = { queryName: 'www.example.test', queryType: 'A' },
): Promise<Blackbox> {
  requireTools(TOOLS.blackbox);
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
  const child = await spawnTool(TOOLS.blackbox, [
    `--config.file=${join(dir, 'blackbox.yml')}`,
    `--web.listen-address=127.0.0.1:${port}`,
    '--log.level=error',
  ]);
  const release = cleanUpOnExit(child, dir);
  await waitForPort(port, child, 'blackbox_exporter');
  return {
    url: `http://127.0.0.1:${port}`,
    pid: child.pid!,
    async stop() {
      await stopChild(child);
      rmSync(dir, { recursive: true, force: true });
      release();
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

/** blackbox_exporter's figures for one probe, by each driver; `probesPerSecond` is the faster one's. */
export interface BlackboxFigures {
  probesPerSecond: number;
  fasterDriver: 'node' | 'wrk';
  /** This process's closed loop (undici), as the agent's engine is driven. */
  node: SideResult;
  /** wrk, a C client: the exporter is not held back by a Node client. */
  wrk: SideResult;
}

/** Lua for wrk: an answer without `probe_success 1` (blackbox answers 200 either way) is a failed probe. */
const PROBE_LUA = `
response = function(status, headers, body)
  if status ~= 200 or not string.find(body, "\\nprobe_success 1\\n", 1, true) then failures = failures + 1 end
end
${WRK_COUNTED_DONE_LUA}`;

export interface ProbeDrive {
  blackbox: Blackbox;
  module: string;
  target: string;
  concurrency: number;
  /** Seconds. */
  duration: number;
}

const probePath = (o: ProbeDrive) =>
  `/probe?module=${encodeURIComponent(o.module)}&target=${encodeURIComponent(o.target)}`;

/** blackbox_exporter's /probe driven by wrk in a closed loop at `concurrency` connections. */
export async function probeWithWrk(o: ProbeDrive): Promise<SideResult> {
  const w = await runWrk({
    url: `${o.blackbox.url}${probePath(o)}`,
    lua: PROBE_LUA,
    connections: o.concurrency,
    seconds: o.duration,
  });
  if (!w) throw missingTool(TOOLS.wrk);
  return {
    probes: w.requests,
    failures: w.failures ?? 0,
    probesPerSecond: w.requestsPerSecond,
    latencyMs: { p50: w.latencyMs.p50, p99: w.latencyMs.p99 },
  };
}

/** blackbox_exporter's /probe driven by this process (undici), as the agent's engine is driven. */
async function probeWithNode(o: ProbeDrive): Promise<SideResult> {
  const pool = new Pool(o.blackbox.url, { connections: o.concurrency, pipelining: 1 });
  const path = probePath(o);
  const bbProbe = async (): Promise<boolean> => {
    const res = await pool.request({ method: 'GET', path });
    const body = await res.body.text();
    return res.statusCode === 200 && /^probe_success 1$/m.test(body);
  };
  try {
    await closedLoop(o.concurrency, 1, bbProbe);
    return await closedLoop(o.concurrency, o.duration, bbProbe);
  } finally {
    await pool.close();
  }
}

/** The same probe through blackbox_exporter at the same concurrency: by this process (after its warm-up), then by wrk. */
async function driveBlackbox(o: ProbeDrive): Promise<BlackboxFigures> {
  const node = await probeWithNode(o);
  const wrk = await probeWithWrk(o);
  const fasterDriver = wrk.probesPerSecond > node.probesPerSecond ? 'wrk' : 'node';
  return { probesPerSecond: Math.max(wrk.probesPerSecond, node.probesPerSecond), fasterDriver, node, wrk };
}

const ratioOf = (a: number, b: number) => Math.round((a / b) * 100) / 100;

/**
 * Runs the agent's workload, then blackbox_exporter's, each after a one-second warm-up; one JSON
 * object. The agent side runs in its own process from dist/ (_engine.ts), so its RSS is the engine's.
 * blackbox_exporter is driven twice, by this process and by wrk; the ratio that counts is against the
 * faster of the two.
 */
export async function compare(o: CompareOptions): Promise<Record<string, unknown>> {
  requireTools(TOOLS.wrk);
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
  const blackbox = await driveBlackbox(o);
  const ratio = ratioOf(agent.probesPerSecond, blackbox.probesPerSecond);
  return {
    workload: o.workload,
    concurrency: o.concurrency,
    durationSeconds: o.duration,
    agent: {
      ...agent,
      baselineRssMb: engine.baselineRssMb,
      peakRssMb: engine.peakRssMb,
      nodeFlags: engine.nodeFlags,
      env,
    },
    blackbox: { ...blackbox, peakRssMb: peakRssMb(o.blackbox.pid), module: o.module, target: o.target },
    ratio,
    ratioByDriver: {
      node: ratioOf(agent.probesPerSecond, blackbox.node.probesPerSecond),
      wrk: ratioOf(agent.probesPerSecond, blackbox.wrk.probesPerSecond),
    },
    ...(fpingProcesses !== undefined ? { fpingProcesses } : {}),
    rssNote:
      'agent.peakRssMb is the VmHWM of a process that runs only the agent check engine, compiled (dist/), with the agent Node flags; agent.baselineRssMb is its VmRSS with its modules loaded, before the first check; blackbox.peakRssMb is the exporter process VmHWM',
    ratioNote:
      'ratio is against blackbox.probesPerSecond, the faster of the exporter driven by this process (node) and by wrk',
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
export async function startNginx(
  opts: { files?: Record<string, Buffer | string>; location?: (root: string) => string } = {},
): Promise<Nginx> {
  const dir = mkdtempSync(join(tmpdir(), 'outpost-bench-nginx-'));
  const port = await freePort();
  const root = join(dir, 'www');
  mkdirSync(root);
  for (const [name, bytes] of Object.entries(opts.files ?? {})) writeFileSync(join(root, name), bytes);
  const server = `server {
    listen 127.0.0.1:${port} backlog=4096;
    ${opts.location ? opts.location(root) : JSON_LOCATION}
  }`;
  const main = [...(process.getuid?.() === 0 ? ['user root root;'] : []), 'worker_processes 1;'];
  writeFileSync(join(dir, 'nginx.conf'), nginxConfig(dir, [server], main, 4096));
  const bin = findTool(TOOLS.nginx);
  const child = spawn(
    bin,
    ['-p', dir, '-e', join(dir, 'error.log'), '-c', join(dir, 'nginx.conf'), '-g', 'daemon off;'],
    { stdio: 'ignore' },
  );
  const release = cleanUpOnExit(child, dir);
  await waitForPort(port, child, 'nginx');
  return {
    port,
    async stop() {
      await stopChild(child, 'SIGQUIT');
      rmSync(dir, { recursive: true, force: true });
      release();
    },
  };
}
