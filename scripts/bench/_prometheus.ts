/**
 * Debian's Prometheus scraping blackbox_exporter's http_2xx probe of N targets every 10 s, one load step
 * of `npm run bench -- prometheus`: a fresh Prometheus per step (temp config and data dir, 127.0.0.1),
 * its figures read back through its HTTP API after the window.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Blackbox } from './_blackbox.ts';
import type { StepFigures } from './_capacity.ts';
import { cleanUpOnExit, freePort, spawnTool, stopChild, waitForPort } from './_proc.ts';
import { cpuSeconds } from './_stats.ts';
import { findTool, TOOLS } from './_tools.ts';

export const INTERVAL_SECONDS = 10;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** blackbox_exporter's probe of each target URL (the usual relabelling), and Prometheus itself for its own metrics. */
function config(targets: string[], blackboxHost: string, selfHost: string): string {
  return `global:
  scrape_interval: ${INTERVAL_SECONDS}s
  scrape_timeout: ${INTERVAL_SECONDS}s
scrape_configs:
  - job_name: self
    static_configs: [{ targets: ['${selfHost}'] }]
  - job_name: blackbox
    metrics_path: /probe
    params: { module: [http_2xx] }
    relabel_configs:
      - { source_labels: [__address__], target_label: __param_target }
      - { source_labels: [__param_target], target_label: instance }
      - { target_label: __address__, replacement: '${blackboxHost}' }
    static_configs:
      - targets:
${targets.map((t) => `          - ${t}`).join('\n')}
`;
}

export function prometheusVersion(): string {
  const out = execFileSync(findTool(TOOLS.prometheus), ['--version'], { encoding: 'utf8' });
  return /version (\S+)/.exec(out)?.[1] ?? out.split('\n')[0]!;
}

interface Prometheus {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

async function startPrometheus(targets: string[], blackbox: Blackbox): Promise<Prometheus> {
  const dir = mkdtempSync(join(tmpdir(), 'outpost-prometheus-'));
  const port = await freePort();
  writeFileSync(join(dir, 'prometheus.yml'), config(targets, blackbox.url.replace('http://', ''), `127.0.0.1:${port}`));
  const child = await spawnTool(TOOLS.prometheus, [
    `--config.file=${join(dir, 'prometheus.yml')}`,
    `--storage.tsdb.path=${join(dir, 'data')}`,
    `--web.listen-address=127.0.0.1:${port}`,
    '--log.level=error',
  ]);
  const release = cleanUpOnExit(child, dir);
  const stop = async () => {
    await stopChild(child);
    rmSync(dir, { recursive: true, force: true });
    release();
  };
  try {
    await waitForPort(port, child, 'prometheus');
  } catch (err) {
    await stop();
    throw err;
  }
  return { url: `http://127.0.0.1:${port}`, pid: child.pid!, stop };
}

type Sample = { metric: Record<string, string>; value: [number, string] };

/** An instant query through the HTTP API, at `time` (unix seconds) or now. */
async function query(p: Prometheus, promql: string, time?: number): Promise<Sample[]> {
  const params = new URLSearchParams({ query: promql, ...(time === undefined ? {} : { time: String(time) }) });
  const res = await fetch(`${p.url}/api/v1/query?${params}`);
  const body = (await res.json()) as { status: string; error?: string; data?: { result: Sample[] } };
  if (body.status !== 'success') throw new Error(`prometheus query ${promql}: ${body.error ?? res.status}`);
  return body.data!.result;
}

const scalar = async (p: Prometheus, promql: string, time?: number) =>
  Number((await query(p, promql, time))[0]?.value[1] ?? 0);

/** Waits until every target has been scraped once (a present `up` series each). */
async function waitScraped(p: Prometheus, n: number): Promise<void> {
  const seconds = INTERVAL_SECONDS * 6 + Math.ceil(n / 100);
  const deadline = Date.now() + seconds * 1000;
  while ((await scalar(p, 'count(up{job="blackbox"})').catch(() => 0)) < n) {
    if (Date.now() > deadline) throw new Error(`prometheus did not scrape all ${n} targets within ${seconds} s`);
    await sleep(1000);
  }
}

export interface PrometheusStep extends StepFigures {
  /** Scrapes in the window (count_over_time of up), failed ones included. */
  scrapes: number;
  /** Scrapes that reached blackbox_exporter and were answered (sum_over_time of up). */
  scrapesUp: number;
  /** prometheus_target_interval_length_seconds quantiles 0.01 / 0.5 / 0.99 of the 10 s interval, in s. */
  intervalSeconds: { p01: number; p50: number; p99: number };
  /** CPU of Prometheus and blackbox_exporter in the window, per probe held. */
  cpuMsPerProbe: number;
}

/** Interval length quantiles from Prometheus's own metric (scraped by its `self` job). */
async function intervalQuantiles(p: Prometheus, time: number): Promise<PrometheusStep['intervalSeconds']> {
  const rows = await query(
    p,
    `prometheus_target_interval_length_seconds{job="self",interval="${INTERVAL_SECONDS}s"}`,
    time,
  );
  const q = (quantile: string) => Number(rows.find((r) => r.metric.quantile === quantile)?.value[1] ?? Number.NaN);
  return { p01: q('0.01'), p50: q('0.5'), p99: q('0.99') };
}

/**
 * One step: Prometheus scraping `n` targets (distinct paths of `targetBase`) through blackbox_exporter;
 * after all were scraped once and `warmup` seconds more, a window of `window` seconds.
 */
export async function prometheusStep(
  n: number,
  o: { blackbox: Blackbox; targetBase: string; window: number; warmup: number },
): Promise<PrometheusStep> {
  const targets = Array.from({ length: n }, (_, i) => `${o.targetBase}/p/${i}`);
  const prom = await startPrometheus(targets, o.blackbox);
  try {
    await waitScraped(prom, n);
    await sleep(o.warmup * 1000);
    const cpu0 = cpuSeconds(prom.pid) + cpuSeconds(o.blackbox.pid);
    await sleep(o.window * 1000);
    const end = Date.now() / 1000;
    const cpu = cpuSeconds(prom.pid) + cpuSeconds(o.blackbox.pid) - cpu0;
    const range = `[${o.window}s]`;
    const scrapes = await scalar(prom, `sum(count_over_time(up{job="blackbox"}${range}))`, end);
    const scrapesUp = await scalar(prom, `sum(sum_over_time(up{job="blackbox"}${range}))`, end);
    const held = await scalar(prom, `sum(sum_over_time(probe_success{job="blackbox"}${range}))`, end);
    const intervalSeconds = await intervalQuantiles(prom, end);
    const lateP99Ms =
      Math.round(Math.max(intervalSeconds.p99 - INTERVAL_SECONDS, INTERVAL_SECONDS - intervalSeconds.p01) * 1000 * 10) /
      10;
    const expected = (n * o.window) / INTERVAL_SECONDS;
    return {
      n,
      expected,
      held,
      lateP99Ms,
      scrapes,
      scrapesUp,
      intervalSeconds,
      cpuMsPerProbe: Math.round((cpu * 1000 * 1000) / Math.max(held, 1)) / 1000,
    };
  } finally {
    await prom.stop();
  }
}
