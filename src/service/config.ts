import path from 'node:path';
import { type Env, readEnum, readInteger, readOptionalString, readString, readUrl } from '../shared/env.ts';
import { ConfigError } from '../shared/errors.ts';
import { type AlertGatewayConfig, loadAlertGatewayConfig } from './alert-channels/gateways.ts';
import type { ProviderEndpoints } from './notify/channels/types.ts';
import { loadProviderEndpoints } from './notify/channels/providers.ts';
import { type ArtifactConfig, loadArtifactConfig } from './artifacts/config.ts';
import { loadRateLimitConfig, type RateLimitConfig } from './http/rate-limit-config.ts';
import { loadTrustProxy, type TrustProxy } from './http/trust-proxy.ts';
import { type DatabaseConfig, loadDatabaseConfig } from './database-url.ts';
import { loadNotifyConfig, type NotifyConfig } from './notify/config.ts';
import { loadOutboundConfig, type OutboundConfig } from './outbound/config.ts';
import { loadRetentionConfig, type RetentionConfig } from './retention/config.ts';
import { loadSecretsKeyConfig, type SecretsKeyConfig } from './secrets/key.ts';
import { loadSuiteServiceConfig, type SuiteServiceConfig } from './suites/config.ts';
import { loadSubscriptionConfig, type SubscriptionConfig } from './subscriptions/config.ts';

export const LOG_LEVELS = ['DEBUG', 'LOG', 'INFO', 'WARN', 'ERROR'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Everything `outpost serve` reads from its environment. README's table lists each one. */
export interface ServiceConfig {
  port: number;
  host: string;
  dataDir: string;
  /** DATABASE_URL: SQLite in dataDir (absent or kind 'sqlite') or PostgreSQL. */
  database?: DatabaseConfig;
  publicUrl: URL;
  logLevel: LogLevel;
  /** How long a lease lasts without a heartbeat before the run is handed to another agent. */
  leaseSeconds: number;
  /** How often agents heartbeat their leases; also the bound on how long a cancel takes to arrive. */
  heartbeatSeconds: number;
  /** A queued run nobody leased within this time expires with a recorded reason. */
  queueTtlSeconds: number;
  /** The longest the service holds a lease request open. */
  maxLeaseWaitSeconds: number;
  /** RATE_LIMIT_*: limits of the public and unauthenticated routes; absent means the defaults. */
  rateLimits?: RateLimitConfig;
  /** TRUST_PROXY: whose X-Forwarded-For gives the client address; absent means nobody's. */
  trustProxy?: TrustProxy;
  /** SHUTDOWN_DRAIN_SECONDS: after SIGTERM, how long readiness fails while requests are still served. */
  shutdownDrainSeconds?: number;
  /** Subscriber notifications (SMTP_URL, SMTP_FROM, NOTIFY_*); absent means the defaults, no email. */
  notify?: NotifyConfig;
  /** Double opt-in of status page subscriptions (SUBSCRIPTION_*); absent means the defaults. */
  subscriptions?: SubscriptionConfig;
  /** OUTBOUND_ALLOW: blocked ranges that calls to user-supplied URLs may reach; absent means none. */
  outbound?: OutboundConfig;
  /** Artifact uploads (ARTIFACT_MAX_BYTES, ARTIFACT_INCOMPLETE_TTL_SECONDS); absent means the defaults. */
  artifacts?: ArtifactConfig;
  /** SECRETS_KEY / SECRETS_KEY_FILE (src/service/secrets/key.ts); absent means the key file in dataDir. */
  secrets?: SecretsKeyConfig;
  /** Playwright check suites (SUITE_BUNDLE_MAX_BYTES, PLAYWRIGHT_MAX_GLOBAL_TIMEOUT_SECONDS, ...); absent means the defaults. */
  suites?: SuiteServiceConfig;
  /** ALERT_SMS_GATEWAY_URL / ALERT_VOICE_GATEWAY_URL; absent means SMS and CALL channels are refused. */
  alertGateways?: AlertGatewayConfig;
  /** ALERT_PAGERDUTY_EVENTS_URL, ALERT_OPSGENIE_*_URL and the gateways; absent means the providers' public endpoints. */
  alertProviders?: ProviderEndpoints;
  /** METRICS_TOKEN: when set, GET /metrics asks for it as a Bearer token; unset, /metrics is open (cluster-internal). */
  metricsToken?: string;
  /** RESULT_RETENTION_DAYS / ROLLUP_RETENTION_MONTHS (retention/config.ts); absent means the defaults. */
  retention?: RetentionConfig;
}

export function loadServiceConfig(env: Env, cwd: string = process.cwd()): ServiceConfig {
  const port = readInteger(env, 'PORT', 8080, { min: 0, max: 65535 });
  const host = readString(env, 'HOST', '0.0.0.0');
  const dataDir = path.resolve(cwd, readString(env, 'DATA_DIR', './data'));
  const publicUrl = readUrl(env, 'PUBLIC_URL', `http://localhost:${port}`);
  const leaseSeconds = readInteger(env, 'JOB_LEASE_SECONDS', 30, { min: 2, max: 3600 });
  return {
    port,
    host,
    dataDir,
    database: loadDatabaseConfig(env),
    publicUrl,
    logLevel: readEnum(env, 'LOG_LEVEL', 'INFO', LOG_LEVELS),
    leaseSeconds,
    heartbeatSeconds: readInteger(
      env,
      'JOB_HEARTBEAT_SECONDS',
      Math.max(1, Math.min(3, Math.floor(leaseSeconds / 3))),
      {
        min: 1,
        max: Math.max(1, Math.floor(leaseSeconds / 2)),
      },
    ),
    queueTtlSeconds: readInteger(env, 'JOB_QUEUE_TTL_SECONDS', 360, { min: 5, max: 86400 }),
    maxLeaseWaitSeconds: readInteger(env, 'JOB_LEASE_MAX_WAIT_SECONDS', 25, { min: 1, max: 300 }),
    rateLimits: loadRateLimitConfig(env),
    trustProxy: loadTrustProxy(env),
    shutdownDrainSeconds: readInteger(env, 'SHUTDOWN_DRAIN_SECONDS', 0, { min: 0, max: 300 }),
    notify: loadNotifyConfig(env),
    subscriptions: loadSubscriptionConfig(env),
    outbound: loadOutboundConfig(env),
    artifacts: loadArtifactConfig(env, dataDir),
    secrets: loadSecretsKeyConfig(env, dataDir, cwd),
    suites: loadSuiteServiceConfig(env, dataDir),
    alertGateways: loadAlertGatewayConfig(env),
    alertProviders: loadProviderEndpoints(env),
    metricsToken: readMetricsToken(env),
    retention: loadRetentionConfig(env),
  };
}

/** A guessable token would protect nothing: shorter ones stop the start rather than pass quietly. */
const METRICS_TOKEN_MIN_LENGTH = 16;

function readMetricsToken(env: Env): string | undefined {
  const token = readOptionalString(env, 'METRICS_TOKEN');
  if (token !== undefined && (token.length < METRICS_TOKEN_MIN_LENGTH || /\s/.test(token))) {
    throw new ConfigError(
      'METRICS_TOKEN',
      `METRICS_TOKEN must be at least ${METRICS_TOKEN_MIN_LENGTH} characters without spaces (e.g. openssl rand -hex 32), or unset to serve /metrics without a token`,
    );
  }
  return token;
}
