/**
 * A Fastify instance with the agent API (plus error handlers) over a real SQLite store in a temp
 * DATA_DIR, a Dispatcher whose clock the test controls, and helpers to create accounts, locations,
 * checks and registered agents. The sweeper does not tick on its own: tests call
 * `dispatcher.sweep()` after moving the clock, so expiry is tested without waiting.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Fastify, { type FastifyInstance, type LightMyRequestResponse } from 'fastify';
import { createAccount } from '../../src/service/accounts.ts';
import { loadServiceConfig, type ServiceConfig } from '../../src/service/config.ts';
import type { RunSignals } from '../../src/service/coordination/types.ts';
import { Dispatcher, type DispatchLog } from '../../src/service/dispatch/dispatcher.ts';
import { RetryCoordinator } from '../../src/service/dispatch/retries.ts';
import { agentApi } from '../../src/service/dispatch/routes.ts';
import { errorHandler, notFoundHandler } from '../../src/service/http/errors.ts';
import { ServiceMetrics } from '../../src/service/metrics/service-metrics.ts';
import { openSqliteStore } from '../../src/service/store/sqlite/index.ts';
import type { PrivateLocation, Store, StoredCheck } from '../../src/service/store/store.ts';
import type { CheckClass, CheckType } from '../../src/shared/checks/types.ts';
import {
  AGENT_PATHS,
  type Job,
  PROTOCOL_VERSION,
  type RegisterResponse,
  type RunResult,
} from '../../src/shared/protocol.ts';
import { passingRunResult } from '../support/results-run-result.ts';

function tempDataDir(): string {
  return mkdtempSync(path.join(tmpdir(), 'outpost-dispatch-'));
}

export const silentLog: DispatchLog = { debug() {}, info() {}, warn() {}, error() {} };

export interface TestLocation {
  location: PrivateLocation;
  key: string;
}

export interface TestTenant {
  accountId: string;
  headers: Record<string, string>;
  location: PrivateLocation;
  key: string;
}

/** An account named `name` with its own private location (the `n`th: office-n) and a raw key of it. */
export async function createTenant(store: Store, name: string, n: number): Promise<TestTenant> {
  const { accountId, apiKey } = await createAccount(store, name);
  const location = await store.locations.create(accountId, {
    name: `Office ${n}`,
    slugName: `office-${n}`,
    icon: 'location',
    proxyUrl: null,
  });
  const { rawKey } = await store.locations.createKey(accountId, location.id);
  return {
    accountId,
    headers: { authorization: `Bearer ${apiKey}`, 'x-service-account': accountId },
    location,
    key: rawKey,
  };
}

export interface Harness {
  app: FastifyInstance;
  store: Store;
  config: ServiceConfig;
  dispatcher: Dispatcher;
  /** The dispatcher's clock in ms; move it forward to expire leases and queued runs. */
  clock: { now: number };
  /** Base URL when started with `listen: true`. */
  url: string;
  /** The service's metrics, counting what the dispatcher does, when started with `metrics: true`. */
  metrics: ServiceMetrics | undefined;
  tenant(name?: string): Promise<TestTenant>;
  check(tenant: TestTenant, opts?: Partial<StoredCheck>): Promise<StoredCheck>;
  agent(
    tenant: TestTenant,
    opts?: { checkTypes?: CheckType[]; agentId?: string; runtimes?: string[] },
  ): Promise<TestAgent>;
  close(): Promise<void>;
}

export interface TestAgent {
  agentId: string;
  registration: RegisterResponse;
  post(path: string, body: unknown): Promise<LightMyRequestResponse>;
  lease(opts?: { slots?: Partial<Record<CheckClass, number>>; waitSeconds?: number }): Promise<Job[]>;
  heartbeat(
    leases: Array<{ runId: string; leaseId: string }>,
  ): Promise<Array<{ runId: string; state: string; leaseExpiresAt: string | null }>>;
  submit(job: Job, overrides?: Partial<RunResult>): Promise<LightMyRequestResponse>;
}

export async function startHarness(
  /**
   * `retries`: the dispatcher carries out retry strategies (failed tries stored as ATTEMPT), as the service does.
   * `signals`: how it announces runs (coordination/); in-process by default.
   * `openStore`: the store to run on (test/support/store-backends.ts); SQLite in a temp DATA_DIR by default.
   */
  opts: {
    config?: Partial<ServiceConfig>;
    listen?: boolean;
    retries?: boolean;
    metrics?: boolean;
    signals?: RunSignals;
    openStore?: () => Promise<Store>;
  } = {},
): Promise<Harness> {
  const dataDir = tempDataDir();
  const config: ServiceConfig = {
    ...loadServiceConfig({ DATA_DIR: dataDir, PORT: '0', PUBLIC_URL: 'http://outpost.test:8080' }),
    ...opts.config,
  };
  const store = await (opts.openStore ?? (() => openSqliteStore(dataDir)))();
  const clock = { now: Date.now() };
  const resultPolicy = opts.retries
    ? new RetryCoordinator({ store, log: silentLog, enqueue: (c, l, d, r) => dispatcher.enqueue(c, l, d, r) })
    : undefined;
  const metrics = opts.metrics ? new ServiceMetrics({ store }) : undefined;
  const dispatcher: Dispatcher = new Dispatcher({
    store,
    config,
    log: silentLog,
    now: () => clock.now,
    sweepIntervalMs: 3_600_000,
    resultPolicy,
    counters: metrics,
    signals: opts.signals,
  });
  const app = Fastify({ logger: false });
  app.setErrorHandler(errorHandler);
  app.setNotFoundHandler(notFoundHandler);
  await app.register(agentApi, { store, config, dispatcher });
  let url = '';
  if (opts.listen) url = await app.listen({ host: '127.0.0.1', port: 0 });
  else await app.ready();
  await dispatcher.start();

  let tenants = 0;
  const harness: Harness = {
    app,
    store,
    config,
    dispatcher,
    clock,
    url,
    metrics,
    async tenant(name = 'Acme') {
      tenants += 1;
      return createTenant(store, name, tenants);
    },
    async check(tenant, overrides = {}) {
      return store.checks.create({
        accountId: tenant.accountId,
        checkType: 'API',
        name: 'Homepage',
        activated: true,
        muted: false,
        frequency: 1,
        frequencyOffset: null,
        locationIds: [tenant.location.id],
        body: { name: 'Homepage', request: { method: 'GET', url: 'http://127.0.0.1:9/' } },
        ...overrides,
      });
    },
    async agent(tenant, agentOpts = {}) {
      const agentId = agentOpts.agentId ?? crypto.randomUUID();
      const post = (path: string, body: unknown) =>
        app.inject({
          method: 'POST',
          url: path,
          headers: { authorization: `Bearer ${tenant.key}` },
          payload: body as object,
        });
      const res = await post(AGENT_PATHS.register, registrationBody(agentId, agentOpts));
      if (res.statusCode !== 200) throw new Error(`register failed: ${res.statusCode} ${res.body}`);
      return {
        agentId,
        registration: res.json() as RegisterResponse,
        post,
        async lease({ slots = {}, waitSeconds = 0 } = {}) {
          const r = await post(AGENT_PATHS.lease, { agentId, slots: { uptime: 10, heavy: 1, ...slots }, waitSeconds });
          if (r.statusCode !== 200) throw new Error(`lease failed: ${r.statusCode} ${r.body}`);
          return (r.json() as { jobs: Job[] }).jobs;
        },
        async heartbeat(leases) {
          const r = await post(AGENT_PATHS.heartbeat, { agentId, leases });
          if (r.statusCode !== 200) throw new Error(`heartbeat failed: ${r.statusCode} ${r.body}`);
          return (r.json() as { leases: Array<{ runId: string; state: string; leaseExpiresAt: string | null }> })
            .leases;
        },
        submit(job, overrides = {}) {
          return post(AGENT_PATHS.results, {
            agentId,
            leaseId: job.leaseId,
            result: resultFor(job, agentId, overrides),
          });
        },
      };
    },
    async close() {
      await dispatcher.stop();
      await app.close();
      await store.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return harness;
}

/** What a test agent registers with: API checks (or `checkTypes`) on both runtimes, 10 uptime slots. */
export function registrationBody(agentId: string, opts: { checkTypes?: CheckType[]; runtimes?: string[] } = {}) {
  return {
    agentId,
    version: '0.0.0-test',
    protocolVersion: PROTOCOL_VERSION,
    hostname: 'test-host',
    capabilities: { checkTypes: opts.checkTypes ?? ['API'], runtimes: opts.runtimes ?? ['2026.04', '2025.04'] },
    concurrency: { uptime: 10, heavy: 1 },
  };
}

export function resultFor(job: Job, agentId: string, overrides: Partial<RunResult> = {}): RunResult {
  const started = new Date();
  return passingRunResult({
    runId: job.runId,
    checkId: job.check.id,
    checkType: job.check.checkType,
    startedAt: started.toISOString(),
    stoppedAt: new Date(started.getTime() + 12).toISOString(),
    responseTime: 12,
    agent: { id: agentId, version: '0.0.0-test' },
    scheduleLagMs: 3,
    ...overrides,
  });
}
