/**
 * Alert delivery under load (issue 11): a real `outpost serve` process with 10,000 API checks at a
 * 1-minute frequency on one private location, one webhook channel subscribed to all of them, and a
 * local webhook receiver (test/support/alert-receivers.ts: HMAC checked). This process is the
 * location's agent, speaking the agent API (docs/protocol.md) without running checks: it leases the
 * runs the scheduler enqueues and answers each at once.
 *
 * - quiet phase: every result passes (each check's status is updated; nothing changes state);
 * - alerting phase: every result fails, so each check's first failing FINAL result raises
 *   ALERT_FAILURE and one webhook.
 *
 * Reports, per alert, the time from the failing result being sent to the service (it is stored
 * before the answer comes back, so this bounds "stored → webhook received" from above) to its
 * webhook arriving, p50 and p99 (target p99 < 500 ms); and the service process's CPU per stored
 * result in each phase (from /proc), whose difference is the extra CPU of a result that alerts
 * (target < 0.1 ms). The state machine's own share is in `npm run bench -- alert-state`.
 *
 * The checks and their subscriptions are written through the store (the API would take minutes
 * for 10,000); their body is a copy of one check created through the API, and the channel is
 * created through the API (its secret sealed as usual).
 *
 *   npm run bench -- alerts [--checks 10000] [--phase 60] [--inflight 64]
 */
import { randomUUID } from 'node:crypto';
import { request } from 'undici';
import { createAccount } from '../../src/service/accounts.ts';
import { defaultSecretsKeyConfig } from '../../src/service/secrets/key.ts';
import { openSqliteStore } from '../../src/service/store/sqlite/index.ts';
import { AGENT_PATHS } from '../../src/shared/protocol.ts';
import { Api, type Proc, startService, tempDir } from '../../test/e2e/harness.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../test/support/alert-receivers.ts';
import { passingRunResult } from '../../test/support/results-run-result.ts';
import { cpuSeconds, numberFlags, summarize } from './_stats.ts';

const SECRET = 'whsec-bench-0123456789abcdef';
const LOCATION = 'bench-alerts';
/** How long after the alerting phase the webhooks still in flight may take to arrive (alerts-peer's too). */
export const DRAIN_MS = 15_000;

interface Job {
  runId: string;
  leaseId: string;
  check: { id: string };
}

interface Setup {
  accountId: string;
  apiKey: string;
  locationKey: string;
  checkIds: string[];
}

/** Service env: the receiver is on loopback, which the outbound guard refuses unless allowed. */
const serviceEnv = (dataDir: string) => ({ DATA_DIR: dataDir, OUTBOUND_ALLOW: '127.0.0.1', LOG_LEVEL: 'INFO' });

/**
 * Account, location, a template check and the webhook channel through the API; then the other
 * checks and their subscriptions through the store, while the service is stopped.
 */
async function setUp(dataDir: string, receiver: WebhookReceiver, checks: number): Promise<Setup> {
  const secrets = { secrets: defaultSecretsKeyConfig(dataDir) };
  let store = await openSqliteStore(dataDir, secrets);
  const auth = await createAccount(store, 'Bench');
  await store.close();
  const service = await startService(serviceEnv(dataDir));
  const api = new Api(service.url, auth);
  const locationKey = (await api.createLocation(LOCATION)).key;
  const template = await api.createApiCheck({
    name: 'bench 0',
    frequency: 1,
    doubleCheck: false,
    privateLocations: [LOCATION],
    request: {
      method: 'GET',
      url: 'http://127.0.0.1:9/',
      assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', property: '', target: '200' }],
    },
  });
  const channel = await api.ok<{ id: number }>('POST', '/v1/alert-channels', {
    type: 'WEBHOOK',
    config: {
      name: 'bench',
      url: `${receiver.url}/hook`,
      method: 'POST',
      webhookSecret: SECRET,
      template: '{"checkId":"{{CHECK_ID}}","alertType":"{{ALERT_TYPE}}"}',
    },
  });
  await service.proc.stop();

  store = await openSqliteStore(dataDir, secrets);
  try {
    const stored = await store.checks.get(auth.accountId, template.id);
    if (!stored) throw new Error('the template check was not stored');
    const { id: _id, createdAt: _c, updatedAt: _u, ...copy } = stored;
    const checkIds = [template.id];
    for (let i = 1; i < checks; i++) {
      const name = `bench ${i}`;
      checkIds.push((await store.checks.create({ ...copy, name, body: { ...copy.body, name } })).id);
    }
    for (const checkId of checkIds)
      await store.alertChannels.putSubscription(auth.accountId, channel.id, {
        checkId,
        groupId: null,
        activated: true,
      });
    return { ...auth, locationKey, checkIds };
  } finally {
    await store.close();
  }
}

/** The agent side: register, then lease and answer every job with a passing or failing result. */
class BenchAgent {
  readonly agentId = randomUUID();
  failing = false;
  stopped = false;
  /** When each failing result was sent, by check id (the first one only: the one that alerts). */
  readonly failingSentAt = new Map<string, number>();
  readonly counts = { passing: 0, failing: 0 };
  readonly #base: string;
  readonly #key: string;
  readonly #inflight: number;

  constructor(base: string, key: string, inflight: number) {
    this.#base = base;
    this.#key = key;
    this.#inflight = inflight;
  }

  async #post<T>(path: string, body: unknown): Promise<T> {
    const res = await request(`${this.#base}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${this.#key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const text = await res.body.text();
    if (res.statusCode >= 300) throw new Error(`${path} answered ${res.statusCode}: ${text}`);
    return JSON.parse(text) as T;
  }

  register(): Promise<unknown> {
    return this.#post(AGENT_PATHS.register, {
      agentId: this.agentId,
      version: 'bench',
      protocolVersion: 1,
      hostname: 'bench',
      capabilities: { checkTypes: ['API'], runtimes: [] },
      concurrency: { uptime: this.#inflight, heavy: 0 },
    });
  }

  async #answer(job: Job): Promise<void> {
    const failing = this.failing;
    const result = passingRunResult({
      runId: job.runId,
      checkId: job.check.id,
      hasFailures: failing,
      error: failing ? 'Expected status code 200, got 500' : null,
      agent: { id: this.agentId, version: 'bench' },
    });
    if (failing && !this.failingSentAt.has(job.check.id)) this.failingSentAt.set(job.check.id, Date.now());
    await this.#post(AGENT_PATHS.results, { agentId: this.agentId, leaseId: job.leaseId, result });
    this.counts[failing ? 'failing' : 'passing']++;
  }

  /** Leases until stopped, answering each batch before asking for more. */
  async run(): Promise<void> {
    while (!this.stopped) {
      const { jobs } = await this.#post<{ jobs: Job[] }>(AGENT_PATHS.lease, {
        agentId: this.agentId,
        slots: { uptime: this.#inflight, heavy: 0 },
        waitSeconds: 1,
      });
      await Promise.all(jobs.map((job) => this.#answer(job)));
    }
  }
}

/** The service's CPU (ms) and the results counted while `during` runs. */
async function measure(
  pid: number,
  agent: BenchAgent,
  during: () => Promise<void>,
): Promise<{ cpuMs: number; results: number }> {
  const cpu0 = cpuSeconds(pid);
  const n0 = agent.counts.passing + agent.counts.failing;
  await during();
  return { cpuMs: (cpuSeconds(pid) - cpu0) * 1000, results: agent.counts.passing + agent.counts.failing - n0 };
}

/** Per alerting check, the time from its failing result being sent to its first failure webhook. */
function latencies(agent: BenchAgent, receiver: WebhookReceiver): { ms: number[]; perCheck: Map<string, number> } {
  const perCheck = new Map<string, number>();
  const ms: number[] = [];
  for (const hook of receiver.requests.items) {
    const body = hook.json as { checkId?: string; alertType?: string } | undefined;
    if (!body?.checkId || body.alertType !== 'ALERT_FAILURE') continue;
    perCheck.set(body.checkId, (perCheck.get(body.checkId) ?? 0) + 1);
    const sentAt = agent.failingSentAt.get(body.checkId);
    if (perCheck.get(body.checkId) === 1 && sentAt !== undefined) ms.push(hook.receivedAt - sentAt);
  }
  return { ms, perCheck };
}

const perResult = (m: { cpuMs: number; results: number }) =>
  m.results > 0 ? Math.round((m.cpuMs / m.results) * 10_000) / 10_000 : null;

export async function run(args: string[]): Promise<Record<string, unknown>> {
  const opts = numberFlags(args, { checks: 10_000, phase: 60, inflight: 64 });
  const data = await tempDir('bench-alerts');
  const receiver = await startWebhookReceiver(SECRET);
  let service: { proc: Proc; url: string } | undefined;
  const agentRuns: Promise<void>[] = [];
  let agent: BenchAgent | undefined;
  try {
    const setup = await setUp(data.dir, receiver, opts.checks);
    service = await startService(serviceEnv(data.dir));
    const pid = service.proc.child.pid!;
    const bench = new BenchAgent(service.url, setup.locationKey, opts.inflight);
    agent = bench;
    await bench.register();
    agentRuns.push(bench.run());
    const pause = () => new Promise<void>((r) => setTimeout(r, opts.phase * 1000));
    const quiet = await measure(pid, bench, pause);
    bench.failing = true;
    const alerting = await measure(pid, bench, pause);
    bench.stopped = true;
    await Promise.all(agentRuns);
    // Webhooks still on their way: wait for the last ones (bounded), never for ones that do not come.
    const expected = bench.failingSentAt.size;
    await receiver.requests
      .waitFor(expected, (r) => (r.json as { alertType?: string } | undefined)?.alertType === 'ALERT_FAILURE', DRAIN_MS)
      .catch(() => undefined);
    const { ms, perCheck } = latencies(bench, receiver);
    const extra =
      perResult(alerting) !== null && perResult(quiet) !== null
        ? Math.round(((perResult(alerting) ?? 0) - (perResult(quiet) ?? 0)) * 10_000) / 10_000
        : null;
    return {
      checks: opts.checks,
      phaseSeconds: opts.phase,
      quietResults: quiet.results,
      alertingResults: alerting.results,
      alertsExpected: expected,
      webhooksReceived: ms.length,
      duplicateWebhooks: [...perCheck.values()].filter((n) => n > 1).length,
      badSignatures: receiver.requests.items.filter((r) => !r.signatureValid).length,
      storedToWebhookMs: ms.length > 0 ? summarize(ms) : null,
      cpuMsPerResultQuiet: perResult(quiet),
      cpuMsPerResultAlerting: perResult(alerting),
      extraCpuMsPerAlertingResult: extra,
      ...(ms.length === 0 ? { note: 'no webhook arrived: this service does not deliver alert notifications' } : {}),
    };
  } finally {
    if (agent) agent.stopped = true;
    await Promise.allSettled(agentRuns);
    await service?.proc.stop();
    await receiver.close();
    await data.remove();
  }
}
