/**
 * Composes the service: store, HTTP server, public API, agent API, dispatcher and scheduler.
 * Nothing here knows SQL or route details; each part lives in its own folder:
 *   store/      the Store interface and its backends (sqlite/ today)
 *   http/       auth, error shapes and other cross-cutting HTTP concerns
 *   routes/     the public API, one file per resource
 *   dispatch/   runs, leases, the agent protocol, the scheduler and error reports
 */
import Fastify, { type FastifyInstance, LogController } from 'fastify';
import { VERSION } from '../shared/version.ts';
import { AlertFanOut } from './alerting/fanout.ts';
import { ReminderSweeper } from './alerting/reminders.ts';
import { loadArtifactConfig } from './artifacts/config.ts';
import type { ArtifactService } from './artifacts/service.ts';
import { placementOf } from './checks/group-of.ts';
import type { ServiceConfig } from './config.ts';
import { createCoordination } from './coordination/index.ts';
import type { Coordination } from './coordination/types.ts';
import { runWhileLeading } from './coordination/leader-tasks.ts';
import { artifactApi, createArtifactService } from './dispatch/artifact-routes.ts';
import { CheckSessions } from './dispatch/check-sessions.ts';
import { Dispatcher } from './dispatch/dispatcher.ts';
import { CheckTriggerRunner } from './dispatch/check-trigger.ts';
import { GroupTriggerRunner } from './dispatch/group-trigger.ts';
import { type EnqueueRun, RetryCoordinator } from './dispatch/retries.ts';
import { agentApi } from './dispatch/routes.ts';
import { Scheduler } from './dispatch/scheduler.ts';
import { anyWatcher } from './dispatch/trigger-runner.ts';
import { HeartbeatMonitor } from './heartbeats/monitor.ts';
import { LocationMetricsSampler } from './metrics/location-sampler.ts';
import { DEFAULT_RETENTION } from './retention/config.ts';
import { RetentionSweeper } from './retention/sweeper.ts';
import { metricsRoute, trackHttpDurations } from './metrics/routes.ts';
import { ServiceMetrics } from './metrics/service-metrics.ts';
import { errorHandler, notFoundHandler } from './http/errors.ts';
import { Draining, probeRoutes } from './http/probes.ts';
import { loadRateLimitConfig } from './http/rate-limit-config.ts';
import { installRateLimits } from './http/rate-limits.ts';
import { fastifyTrustProxy } from './http/trust-proxy.ts';
import { followOtherReplicas, leaderTasksOf } from './leader-work.ts';
import { AlertDeliveryWorker } from './notify/alert-delivery.ts';
import { createChannelSenders } from './notify/channels/index.ts';
import { createMailTransport } from './notify/channels/mail-transport.ts';
import { loadProviderEndpoints } from './notify/channels/providers.ts';
import type { ChannelSenders, MailTransport, ProviderEndpoints } from './notify/channels/types.ts';
import { loadNotifyConfig } from './notify/config.ts';
import { OutboxWorker } from './notify/outbox-worker.ts';
import { loadOutboundConfig } from './outbound/config.ts';
import { createOutboundDispatcher } from './outbound/dispatcher.ts';
import { OutboundPolicy } from './outbound/policy.ts';
import { badgeRoutes } from './routes/badges.ts';
import { checkGroupTriggerUrlRoutes } from './routes/check-group-triggers.ts';
import { checkTriggerUrlRoutes } from './routes/check-triggers.ts';
import { publicApi } from './routes/index.ts';
import { registerOpenApi } from './routes/openapi.ts';
import { pingRoutes } from './routes/ping.ts';
import { defaultSecretsKeyConfig } from './secrets/key.ts';
import { openStore } from './store/open.ts';
import type { Run, Store, StoredCheck } from './store/store.ts';
import { SubscriptionExpirySweeper } from './subscriptions/expiry.ts';
import { suiteBundleAgentRoutes } from './suites/agent-routes.ts';
import { SuiteBundleStore } from './suites/bundle-store.ts';
import { loadSuiteServiceConfig } from './suites/config.ts';
import { webPages } from './web/index.ts';

/** Lets the public API tell the dispatcher that a check was created, changed or deleted. */
export interface ServiceHooks {
  checkChanged(accountId: string, checkId: string, check: StoredCheck | undefined): Promise<void>;
  /** Subscriber notifications were committed to the outbox: the worker should look now. */
  notificationsQueued?(): void;
  /** Starts a run of `check` at `locationId` now (Playwright suite triggers, routes/checks-playwright.ts). */
  runNow?(check: StoredCheck, locationId: string): Promise<Run>;
  /** Alerts were committed to check_alerts (by results, reminders, SSL expiry): fan them out now. */
  alertsRaised?(): void;
  /** On-demand runs (routes/check-sessions.ts); absent, those routes are not served. */
  checkSessions?: CheckSessions;
}

/** How alert notifications reach their channels; each part absent takes its default (buildAlerting below). */
export interface AlertSendingOptions {
  /** One sender per channel type (notify/channels/). */
  senders?: ChannelSenders;
  /** PagerDuty, Opsgenie and the SMS/voice gateways. */
  providers?: ProviderEndpoints;
  /** Sends EMAIL notifications; null: none are sent (each fails, saying so). */
  mail?: MailTransport | null;
}

export interface ServiceOptions {
  logger?: boolean;
  alerting?: AlertSendingOptions;
}

export interface Service {
  app: FastifyInstance;
  store: Store;
  dispatcher: Dispatcher;
  scheduler: Scheduler;
  /** Records FAILING for heartbeats that miss their deadline (heartbeats/monitor.ts). */
  heartbeats: HeartbeatMonitor;
  /** Delivers subscriber notifications from the outbox (notify/outbox-worker.ts). */
  notifier: OutboxWorker;
  /** Removes PENDING subscriptions nobody confirmed in time (subscriptions/expiry.ts). */
  subscriptionExpiry: SubscriptionExpirySweeper;
  /** Records the reminders of standing alerts when they come due (alerting/reminders.ts). */
  reminders: ReminderSweeper;
  /** Turns alerts into stored notifications, one per channel told (alerting/fanout.ts). */
  alertFanOut: AlertFanOut;
  /** Sends stored alert notifications to their channels (notify/alert-delivery.ts). */
  alertDelivery: AlertDeliveryWorker;
  /** Alerts were committed by some producer (e.g. a reminder sweep): fan them out now. */
  alertsRaised(): void;
  /** Artifact uploads, storage, downloads and retention (artifacts/). */
  artifacts: ArtifactService;
  /** Leadership among replicas and run announcements across them (coordination/). */
  coordination: Coordination;
  /** Listens on config.host:config.port and starts the scheduler; resolves to the base URL. */
  start(): Promise<string>;
  /** From now on /-/readiness fails (503), while every request is still served: the first step of a shutdown. */
  drain(): void;
  /** Drains, then stops scheduling, answers held lease requests, closes the server and the store. */
  stop(): Promise<void>;
}

const PINO_LEVEL = { DEBUG: 'debug', LOG: 'info', INFO: 'info', WARN: 'warn', ERROR: 'error' } as const;

type Log = FastifyInstance['log'];

export async function buildService(config: ServiceConfig, opts: ServiceOptions = {}): Promise<Service> {
  // The store opens before the logger exists; its background checkpoints report through this.
  let warn: ((message: string) => void) | undefined;
  const store = await openServiceStore(config, (message) => warn?.(message));
  const app = createHttpServer(config, opts);
  warn = (message) =>
    app.log.warn({ message }, 'background checkpoint of the SQLite write-ahead log failed; the next one tries again');
  const metrics = new ServiceMetrics({ store });
  const outbound = buildOutbound(config);
  const alerts = buildAlerting(store, config, outbound, opts.alerting ?? {}, app.log);
  // Replicas on one database: leader work once, run announcements to every replica (coordination/).
  const coordination = createCoordination(config.database, app.log);
  // Results (dispatcher), reminders and routes all commit alerts; the fan-out (the leader's) should look at once.
  const alertsRaised = () => {
    alerts.fanOut.poke();
    coordination.signals.workQueued('alerts');
  };
  const runs = buildDispatch(store, config, app.log, { alertsRaised, coordination, metrics });
  const workers = buildWorkers(store, config, outbound, alertsRaised, app.log);
  runLeaderWork(coordination, { ...runs, ...workers, store, alerts }, app.log);
  const hooks = serviceHooks(store, runs.dispatcher, runs.scheduler, workers.notifier, coordination, alertsRaised);
  const draining = new Draining();
  const artifacts = createArtifactService(store, config.artifacts ?? loadArtifactConfig({}, config.dataDir), app.log);
  await registerCrossCutting(app, { store, config, metrics, draining });
  await app.register(publicApi, { store, config, hooks });
  await registerTokenRoutes(app, { store, triggers: runs.triggers, checkTriggers: runs.checkTriggers });
  await registerAgentRoutes(app, { store, config, dispatcher: runs.dispatcher, metrics, artifacts });
  // Status pages, dashboards and the console: HTML from the same store (src/service/web/).
  await app.register(webPages, { store, config, hooks, artifacts });

  const { dispatcher, scheduler } = runs;
  const { heartbeats, notifier, subscriptionExpiry, reminders } = workers;
  return {
    app,
    store,
    dispatcher,
    scheduler,
    heartbeats,
    notifier,
    subscriptionExpiry,
    reminders,
    alertFanOut: alerts.fanOut,
    alertDelivery: alerts.delivery,
    alertsRaised,
    artifacts,
    coordination,
    async start() {
      const address = await app.listen({ port: config.port, host: config.host });
      // Leader work starts when this replica leads: at once in-process (leader-work.ts).
      await coordination.start();
      return address;
    },
    drain: () => draining.start(),
    async stop() {
      draining.start();
      // Held lease requests are answered first, so agents go to another replica at once.
      await dispatcher.stop();
      // Leader work stops before the leadership is given up, so the next leader never overlaps it.
      await coordination.close();
      runs.triggers.stop();
      runs.checkTriggers.stop();
      await outbound.close();
      await app.close();
      await store.close();
    },
  };
}

/** Loads the secrets key now: a key that cannot open the stored secrets stops the start (ConfigError). */
function openServiceStore(config: ServiceConfig, onCheckpointError: (message: string) => void): Promise<Store> {
  return openStore({
    ...(config.database ? { database: config.database } : {}),
    dataDir: config.dataDir,
    secrets: config.secrets ?? defaultSecretsKeyConfig(config.dataDir),
    onCheckpointError,
  });
}

function createHttpServer(config: ServiceConfig, opts: ServiceOptions): FastifyInstance {
  return Fastify({
    logger:
      opts.logger === false ? false : { level: PINO_LEVEL[config.logLevel], redact: ['req.headers.authorization'] },
    // Agents make several requests a second each (leases, heartbeats, results): a line per request
    // drowns what operators need at INFO. LOG_LEVEL=DEBUG brings the access log back.
    logController: new LogController({ disableRequestLogging: config.logLevel !== 'DEBUG' }),
    // Agent lease requests are held open for up to maxLeaseWaitSeconds.
    requestTimeout: (config.maxLeaseWaitSeconds + 30) * 1000,
    bodyLimit: 10 * 1024 * 1024,
    // The client address that per-address rate limits use: X-Forwarded-For only from trusted proxies.
    trustProxy: fastifyTrustProxy(config.trustProxy ?? false),
  });
}

/** The dispatcher, the scheduler, and the trigger and retry policies the dispatcher asks about each result. */
function buildDispatch(
  store: Store,
  config: ServiceConfig,
  log: Log,
  deps: { alertsRaised: () => void; coordination: Coordination; metrics: ServiceMetrics },
) {
  // Group and check triggers and retries enqueue through the dispatcher, created after them.
  const enqueue: EnqueueRun = (c, l, d, r) => dispatcher.enqueue(c, l, d, r);
  const triggers = new GroupTriggerRunner({ store, log, enqueue });
  const checkTriggers = new CheckTriggerRunner({ store, log, enqueue });
  const watcher = anyWatcher(triggers, checkTriggers);
  const retries = new RetryCoordinator({ store, log, watcher, enqueue });
  const dispatcher = new Dispatcher({
    store,
    config,
    log,
    resultPolicy: retries,
    alertsRaised: deps.alertsRaised,
    signals: deps.coordination.signals,
    counters: deps.metrics,
  });
  const scheduler = new Scheduler({ store, config, dispatcher, log, placement: (check) => placementOf(store, check) });
  return { triggers, checkTriggers, dispatcher, scheduler };
}

/** The background workers the leader runs, besides dispatch and the alert fan-out. */
function buildWorkers(
  store: Store,
  config: ServiceConfig,
  outbound: ReturnType<typeof buildOutbound>,
  alertsRaised: () => void,
  log: Log,
) {
  return {
    notifier: new OutboxWorker({
      store,
      config: outbound.notify,
      http: outbound.http,
      mail: outbound.mail,
      log,
      publicUrl: config.publicUrl,
    }),
    subscriptionExpiry: new SubscriptionExpirySweeper({ subscriptions: store.subscriptions, log }),
    heartbeats: new HeartbeatMonitor({ heartbeats: store.heartbeats, log }),
    reminders: new ReminderSweeper({ store, log, onAlertsRaised: alertsRaised }),
    locationSampler: new LocationMetricsSampler({ runs: store.runs, samples: store.locationMetrics, log }),
    retention: new RetentionSweeper({ repo: store.retention, config: config.retention ?? DEFAULT_RETENTION, log }),
  };
}

/** Leader work runs on the replica that leads; every replica follows the others' announcements. */
function runLeaderWork(
  coordination: Coordination,
  parts: Omit<ReturnType<typeof buildDispatch>, 'triggers' | 'checkTriggers'> &
    ReturnType<typeof buildWorkers> & { store: Store; alerts: ReturnType<typeof buildAlerting> },
  log: Log,
) {
  const { dispatcher, scheduler, heartbeats, reminders, notifier, subscriptionExpiry, alerts } = parts;
  runWhileLeading(
    coordination.leadership,
    leaderTasksOf({
      dispatcher,
      scheduler,
      heartbeats,
      reminders,
      notifier,
      subscriptionExpiry,
      alertFanOut: alerts.fanOut,
      alertDelivery: alerts.delivery,
      locationSampler: parts.locationSampler,
      retention: parts.retention,
    }),
    log,
  );
  followOtherReplicas(
    coordination.signals,
    { store: parts.store, scheduler, notifier, alertFanOut: alerts.fanOut },
    log,
  );
}

/** How the public API tells the scheduler, the workers and the other replicas what it changed. */
function serviceHooks(
  store: Store,
  dispatcher: Dispatcher,
  scheduler: Scheduler,
  notifier: OutboxWorker,
  coordination: Coordination,
  alertsRaised: () => void,
): ServiceHooks {
  return {
    checkChanged: async (accountId, checkId, check) => {
      await scheduler.checkChanged(accountId, checkId, check);
      coordination.signals.checkChanged(accountId, checkId);
    },
    notificationsQueued: () => {
      notifier.poke();
      coordination.signals.workQueued('notifications');
    },
    runNow: (check, locationId) => dispatcher.enqueue(check, locationId, Date.now()),
    alertsRaised,
    checkSessions: new CheckSessions({
      store,
      dispatcher,
      locationSlug: async (id) => (await store.locations.getById(id))?.slugName ?? id,
    }),
  };
}

/** Error shapes, request metrics, rate limits, probes and the OpenAPI document: all before the routes. */
async function registerCrossCutting(
  app: FastifyInstance,
  deps: { store: Store; config: ServiceConfig; metrics: ServiceMetrics; draining: Draining },
) {
  app.setErrorHandler(errorHandler);
  app.setNotFoundHandler(notFoundHandler);
  trackHttpDurations(app, deps.metrics);
  // Each route is given its limits as it is registered.
  await installRateLimits(app, deps.config.rateLimits ?? loadRateLimitConfig({}));
  await app.register(probeRoutes, { store: deps.store, draining: deps.draining });
  // @fastify/swagger collects the routes as they are registered.
  await registerOpenApi(app, { publicUrl: deps.config.publicUrl, version: VERSION });
}

/** Routes outside publicApi whose credential is a token in the URL (or none), not an API key. */
async function registerTokenRoutes(
  app: FastifyInstance,
  deps: { store: Store; triggers: GroupTriggerRunner; checkTriggers: CheckTriggerRunner },
) {
  const { store } = deps;
  await app.register(pingRoutes, { store });
  // Badges are embedded in READMEs (no key), for accounts that enable them.
  await app.register(badgeRoutes, { store });
  await app.register(checkGroupTriggerUrlRoutes, { store, triggers: deps.triggers });
  await app.register(checkTriggerUrlRoutes, { store, triggers: deps.checkTriggers });
}

/** What agents call (location key), and the metrics scrape beside it. */
async function registerAgentRoutes(
  app: FastifyInstance,
  deps: {
    store: Store;
    config: ServiceConfig;
    dispatcher: Dispatcher;
    metrics: ServiceMetrics;
    artifacts: ArtifactService;
  },
) {
  const { store, config } = deps;
  await app.register(agentApi, { store, config, dispatcher: deps.dispatcher });
  await app.register(metricsRoute, { metrics: deps.metrics, token: config.metricsToken });
  await app.register(suiteBundleAgentRoutes, {
    store,
    bundles: new SuiteBundleStore((config.suites ?? loadSuiteServiceConfig({}, config.dataDir)).dir),
  });
  await app.register(artifactApi, { store, artifacts: deps.artifacts, publicUrl: config.publicUrl });
}

/**
 * What the service's own outbound notifications go through, one of each for subscriber notifications
 * and alerts alike: the outbound guard (OUTBOUND_ALLOW) and, with SMTP_URL, one SMTP transport.
 */
function buildOutbound(config: ServiceConfig) {
  const notify = config.notify ?? loadNotifyConfig({});
  const http = createOutboundDispatcher(new OutboundPolicy(config.outbound ?? loadOutboundConfig({})), {
    connectTimeoutMs: notify.timeoutMs,
  });
  const mail = notify.smtpUrl
    ? createMailTransport({ smtpUrl: notify.smtpUrl, from: notify.smtpFrom, timeoutMs: notify.timeoutMs })
    : null;
  return {
    notify,
    http,
    mail,
    async close() {
      mail?.close();
      await http.close();
    },
  };
}

/** The alert fan-out and the delivery worker it pokes. */
function buildAlerting(
  store: Store,
  config: ServiceConfig,
  outbound: ReturnType<typeof buildOutbound>,
  sending: AlertSendingOptions,
  log: Log,
) {
  const { notify } = outbound;
  const delivery = new AlertDeliveryWorker({
    store,
    config: notify,
    senders: sending.senders ?? createChannelSenders(),
    context: {
      dispatcher: outbound.http,
      providers: sending.providers ?? config.alertProviders ?? loadProviderEndpoints({}),
      mail: sending.mail ?? outbound.mail,
    },
    log,
  });
  const fanOut = new AlertFanOut({
    store,
    publicUrl: config.publicUrl,
    pollMs: notify.pollMs,
    log,
    onQueued: () => delivery.poke(),
  });
  return { fanOut, delivery };
}
