/**
 * The peer of `alerts`: Prometheus's Alertmanager (scripts/bench/_alertmanager.ts) given one alert
 * per check, paced as the alerts bench's failing results arrive (10,000 checks at a 1-minute
 * frequency: ~167 a second), each POSTed to /api/v2/alerts on its own. Reports, per alert, the time
 * from Alertmanager accepting the POST (its 200 read here) to the webhook carrying that alert arriving
 * at the local receiver (p50, p99, max), alerts notified twice, and Alertmanager's CPU (from /proc).
 *
 * Then, when wrk is installed, Alertmanager's own ingest rate: wrk POSTs one new alert per request
 * (a label unique per request) for `--ingest` seconds; those alerts are routed to a receiver that
 * sends nothing, so the figure is taking alerts in, not delivering them.
 *
 *   npm run bench -- alerts-peer [--alerts 10000] [--rate 166.67] [--inflight 64] [--ingest 10] [--connections 16]
 */
import { Pool } from 'undici';
import { type HttpReceiver, type ReceivedRequest, startHttpReceiver } from '../../test/support/alert-receivers.ts';
import { type Alertmanager, INGEST_ALERTNAME, startAlertmanager } from './_alertmanager.ts';
import { cpuSeconds, numberFlags, peakRssMb, summarize } from './_stats.ts';
import { runWrk, WRK_DONE_LUA } from './_wrk.ts';
import { DRAIN_MS } from './alerts.ts';

/** Alertmanager's smallest group_wait: zero, so a new group's first notification is not held back. */
const GROUP_WAIT = '0s';
const ALERTNAME = 'OutpostCheckFailing';

interface Flags {
  alerts: number;
  rate: number;
  inflight: number;
  ingest: number;
  connections: number;
}

interface Post {
  sentAt: number;
  acceptedAt: number;
}

/** The check labels of the alerts a webhook carries (Alertmanager's webhook body). */
function checksIn(hook: ReceivedRequest): string[] {
  const body = hook.json as { alerts?: { labels?: Record<string, string> }[] } | undefined;
  return (body?.alerts ?? []).filter((a) => a.labels?.alertname === ALERTNAME).map((a) => a.labels?.check ?? '');
}

/** POSTs one alert for `check`; resolves when Alertmanager has accepted it. */
async function postAlert(pool: Pool, check: string): Promise<Post> {
  const sentAt = Date.now();
  const body = JSON.stringify([
    { labels: { alertname: ALERTNAME, check }, annotations: { summary: `check ${check} failed` } },
  ]);
  const res = await pool.request({
    method: 'POST',
    path: '/api/v2/alerts',
    headers: { 'content-type': 'application/json' },
    body,
  });
  const text = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`POST /api/v2/alerts answered ${res.statusCode}: ${text}`);
  return { sentAt, acceptedAt: Date.now() };
}

/** Sends `count` alerts at `rate` a second (open loop: a slow answer does not delay the next send). */
async function sendPaced(pool: Pool, count: number, rate: number): Promise<Map<string, Post>> {
  const posts = new Map<string, Post>();
  const pending: Promise<void>[] = [];
  const start = Date.now();
  for (let i = 0; i < count; i++) {
    const wait = start + (i * 1000) / rate - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const check = `check-${i}`;
    pending.push(postAlert(pool, check).then((p) => void posts.set(check, p)));
  }
  await Promise.all(pending);
  return posts;
}

/** Per alert, POST accepted (and sent) → first webhook carrying it; and how many came more than once. */
function latencies(posts: Map<string, Post>, receiver: HttpReceiver) {
  const seen = new Map<string, number>();
  const fromAccepted: number[] = [];
  const fromSent: number[] = [];
  for (const hook of receiver.requests.items) {
    for (const check of checksIn(hook)) {
      seen.set(check, (seen.get(check) ?? 0) + 1);
      const post = posts.get(check);
      if (seen.get(check) !== 1 || !post) continue;
      fromAccepted.push(hook.receivedAt - post.acceptedAt);
      fromSent.push(hook.receivedAt - post.sentAt);
    }
  }
  return { fromAccepted, fromSent, notifiedTwice: [...seen.values()].filter((n) => n > 1).length };
}

async function measureDelivery(am: Alertmanager, receiver: HttpReceiver, f: Flags) {
  const pool = new Pool(am.url, { connections: f.inflight });
  try {
    const cpu0 = cpuSeconds(am.pid);
    const started = Date.now();
    const posts = await sendPaced(pool, f.alerts, f.rate);
    const sendSeconds = (Date.now() - started) / 1000;
    // Webhooks still on their way: wait for the last ones (bounded), never for ones that do not come.
    await receiver.requests.waitFor(f.alerts, (r) => checksIn(r).length > 0, DRAIN_MS).catch(() => undefined);
    const cpuMs = (cpuSeconds(am.pid) - cpu0) * 1000;
    const { fromAccepted, fromSent, notifiedTwice } = latencies(posts, receiver);
    return {
      alertsPosted: posts.size,
      sendSeconds: Math.round(sendSeconds * 100) / 100,
      alertsNotified: fromAccepted.length,
      webhooks: receiver.requests.items.length,
      notifiedTwice,
      // Webhooks read here before the POST's own answer: Alertmanager dispatches before it replies.
      webhookBeforeAnswer: fromAccepted.filter((ms) => ms < 0).length,
      acceptedToWebhookMs: fromAccepted.length > 0 ? summarize(fromAccepted) : null,
      sentToWebhookMs: fromSent.length > 0 ? summarize(fromSent) : null,
      cpuMs: Math.round(cpuMs),
      cpuMsPerAlert: Math.round((cpuMs / Math.max(1, posts.size)) * 1000) / 1000,
      peakRssMb: peakRssMb(am.pid),
    };
  } finally {
    await pool.close();
  }
}

/** wrk's Lua: each request one new alert, its check label unique per thread and request. */
const INGEST_LUA = `
local threads = 0
function setup(thread)
  thread:set("tid", threads)
  threads = threads + 1
end
local n = 0
request = function()
  n = n + 1
  local body = string.format('[{"labels":{"alertname":"${INGEST_ALERTNAME}","check":"ingest-%d-%d"}}]', tid, n)
  return wrk.format("POST", "/api/v2/alerts", {["Content-Type"] = "application/json"}, body)
end
${WRK_DONE_LUA}`;

async function measureIngest(am: Alertmanager, f: Flags) {
  const cpu0 = cpuSeconds(am.pid);
  const result = await runWrk({ url: am.url, lua: INGEST_LUA, connections: f.connections, seconds: f.ingest });
  if (!result) return { ingest: null, ingestNote: 'wrk is not installed (apt-get install wrk): no ingest figure' };
  const cpuMs = (cpuSeconds(am.pid) - cpu0) * 1000;
  return {
    ingest: {
      ...result,
      seconds: f.ingest,
      connections: f.connections,
      cpuMsPerAlert: Math.round((cpuMs / Math.max(1, result.requests)) * 1000) / 1000,
    },
  };
}

export async function run(args: string[]): Promise<Record<string, unknown>> {
  const f = numberFlags(args, { alerts: 10_000, rate: 10_000 / 60, inflight: 64, ingest: 10, connections: 16 });
  const receiver = await startHttpReceiver(() => ({ status: 200, body: 'ok' }));
  let am: Alertmanager | undefined;
  try {
    am = await startAlertmanager({ webhookUrl: `${receiver.url}/hook`, groupWait: GROUP_WAIT });
    const delivery = await measureDelivery(am, receiver, f);
    const ingest = await measureIngest(am, f);
    return {
      peer: 'prometheus-alertmanager',
      alerts: f.alerts,
      ratePerSecond: Math.round(f.rate * 100) / 100,
      groupWait: GROUP_WAIT,
      ...delivery,
      ...ingest,
    };
  } finally {
    await am?.stop();
    await receiver.close();
  }
}
