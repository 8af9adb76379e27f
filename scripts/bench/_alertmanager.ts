/**
 * Prometheus's Alertmanager (Debian's prometheus-alertmanager) as the peer of Outpost's alert
 * delivery: started on 127.0.0.1 with a temp config and storage, clustering off, one webhook
 * receiver. Alerts are grouped by alertname and check, so each check is a group of its own (as
 * Outpost raises one alert per check), and a group's first notification leaves after `groupWait`.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { cleanUpOnExit, freePort, spawnTool, stopChild, waitForPort } from './_proc.ts';
import { TOOLS } from './_tools.ts';

/** Alerts with this alertname go to a receiver that sends nothing: the ingest measurement's. */
export const INGEST_ALERTNAME = 'BenchIngest';

export interface Alertmanager {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

export interface AlertmanagerOptions {
  webhookUrl: string;
  /** Alertmanager duration syntax, e.g. "0s". */
  groupWait: string;
}

function config(o: AlertmanagerOptions): string {
  return `route:
  receiver: bench-webhook
  group_by: [alertname, check]
  group_wait: ${o.groupWait}
  group_interval: 1m
  repeat_interval: 24h
  routes:
    - matchers: ['alertname="${INGEST_ALERTNAME}"']
      receiver: bench-ingest
receivers:
  - name: bench-webhook
    webhook_configs:
      - url: ${o.webhookUrl}
        send_resolved: false
  - name: bench-ingest
`;
}

/** Polls /-/ready until Alertmanager answers 200 (it listens before it has loaded its state). */
async function waitReady(url: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const res = await request(`${url}/-/ready`).catch(() => undefined);
    await res?.body.dump();
    if (res?.statusCode === 200) return;
    if (Date.now() > deadline) throw new Error(`alertmanager at ${url} was not ready within 10 s`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

export async function startAlertmanager(o: AlertmanagerOptions): Promise<Alertmanager> {
  const dir = mkdtempSync(join(tmpdir(), 'outpost-alertmanager-'));
  writeFileSync(join(dir, 'alertmanager.yml'), config(o));
  const port = await freePort();
  const child = await spawnTool(TOOLS.alertmanager, [
    `--config.file=${join(dir, 'alertmanager.yml')}`,
    `--storage.path=${join(dir, 'data')}`,
    `--web.listen-address=127.0.0.1:${port}`,
    // Empty: no gossip listener, so no peer to wait for before each notification.
    '--cluster.listen-address=',
    '--log.level=error',
  ]).catch((err: unknown) => {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  });
  const release = cleanUpOnExit(child, dir);
  const stop = async () => {
    await stopChild(child);
    rmSync(dir, { recursive: true, force: true });
    release();
  };
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitForPort(port, child, 'alertmanager');
    await waitReady(url);
  } catch (err) {
    await stop();
    throw err;
  }
  return { url, pid: child.pid!, stop };
}
