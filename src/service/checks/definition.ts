/**
 * Turns a stored check into the definition the dispatcher puts into a job. The stored body is the
 * API's shape (what GET returns); the job carries only what an agent needs to run it. Defaults are
 * applied again here, so a body stored by an older version (missing a newer field) still runs.
 */
import {
  type ApiCheckDefinition,
  type ApiRequest,
  type AssertionOf,
  type BrowserCheckDefinition,
  type CheckDefinition,
  type DnsCheckDefinition,
  type DnsRequest,
  ICMP_PING_COUNT,
  type IcmpCheckDefinition,
  type IcmpRequest,
  type MultiStepCheckDefinition,
  type ScriptDependency,
  type TcpCheckDefinition,
  type TcpRequest,
} from '../../shared/checks/types.ts';
import type {
  SslCheckDefinition,
  SslConfig,
  SslRequest,
  UrlCheckDefinition,
  UrlRequest,
} from '../../shared/checks/monitors.ts';
import type { StoredCheckGroup } from '../store/check-group-types.ts';
import type { StoredCheck } from '../store/store.ts';
import { DEFAULT_DEGRADED_RESPONSE_TIME_MS, DEFAULT_MAX_RESPONSE_TIME_MS } from './api-check-schema.ts';
import { DNS_DEFAULT_DEGRADED_RESPONSE_TIME_MS, DNS_DEFAULT_MAX_RESPONSE_TIME_MS } from './dns-check-schema.ts';
import { applyGroup } from './group-merge.ts';
import {
  ICMP_DEFAULT_DEGRADED_PACKET_LOSS,
  ICMP_DEFAULT_DEGRADED_RESPONSE_TIME_MS,
  ICMP_DEFAULT_MAX_PACKET_LOSS,
  ICMP_DEFAULT_MAX_RESPONSE_TIME_MS,
} from './icmp-check-schema.ts';
import { toPlaywrightDefinition } from './playwright-check-schema.ts';
import {
  SSL_DEFAULT_DEGRADED_RESPONSE_TIME_MS,
  SSL_DEFAULT_MAX_RESPONSE_TIME_MS,
  withSslDefaults,
} from './ssl-check-schema.ts';
import { TCP_DEFAULT_DEGRADED_RESPONSE_TIME_MS, TCP_DEFAULT_MAX_RESPONSE_TIME_MS } from './tcp-check-schema.ts';
import { URL_DEFAULT_DEGRADED_RESPONSE_TIME_MS, URL_DEFAULT_MAX_RESPONSE_TIME_MS } from './url-check-schema.ts';
import { NO_USER_CODE_CONTEXT, type UserCodeContext, withUserCode } from './user-code.ts';

/**
 * The definition of a job: the check's own, with its group's settings applied when it is in one
 * (apiCheckDefaults, variables, scripts, runtime: see ./group-merge.ts), then the account's variables,
 * the snippets' code and the runtime default (./user-code.ts; `userCode` from userCodeContextOf).
 */
export function toCheckDefinition(
  stored: StoredCheck,
  group?: StoredCheckGroup,
  userCode: UserCodeContext = NO_USER_CODE_CONTEXT,
): CheckDefinition {
  return withUserCode(applyGroup(ownDefinition(stored), stored.body, group), stored.body, userCode);
}

function ownDefinition(stored: StoredCheck): CheckDefinition {
  const body = stored.body;
  const base = {
    id: stored.id,
    accountId: stored.accountId,
    name: stored.name,
    shouldFail: body.shouldFail === true,
    runtimeId: typeof body.runtimeId === 'string' ? body.runtimeId : null,
  };
  // The reference allows null thresholds; the agent needs numbers, so null means the default.
  const thresholds = (degraded: number, max: number) => ({
    degradedResponseTime: numberOr(body.degradedResponseTime, degraded),
    maxResponseTime: numberOr(body.maxResponseTime, max),
  });
  switch (stored.checkType) {
    case 'API':
      return {
        ...base,
        checkType: 'API',
        request: toApiRequest(body.request as Partial<ApiRequest>),
        ...thresholds(DEFAULT_DEGRADED_RESPONSE_TIME_MS, DEFAULT_MAX_RESPONSE_TIME_MS),
      } satisfies ApiCheckDefinition;
    case 'TCP':
      return {
        ...base,
        checkType: 'TCP',
        request: toTcpRequest(body.request as Partial<TcpRequest>),
        ...thresholds(TCP_DEFAULT_DEGRADED_RESPONSE_TIME_MS, TCP_DEFAULT_MAX_RESPONSE_TIME_MS),
      } satisfies TcpCheckDefinition;
    case 'DNS':
      return {
        ...base,
        checkType: 'DNS',
        request: toDnsRequest(body.request as Partial<DnsRequest>),
        ...thresholds(DNS_DEFAULT_DEGRADED_RESPONSE_TIME_MS, DNS_DEFAULT_MAX_RESPONSE_TIME_MS),
      } satisfies DnsCheckDefinition;
    case 'ICMP':
      return {
        ...base,
        checkType: 'ICMP',
        request: toIcmpRequest(body.request as Partial<IcmpRequest>),
        ...thresholds(ICMP_DEFAULT_DEGRADED_RESPONSE_TIME_MS, ICMP_DEFAULT_MAX_RESPONSE_TIME_MS),
        degradedPacketLossThreshold: numberOr(body.degradedPacketLossThreshold, ICMP_DEFAULT_DEGRADED_PACKET_LOSS),
        maxPacketLossThreshold: numberOr(body.maxPacketLossThreshold, ICMP_DEFAULT_MAX_PACKET_LOSS),
      } satisfies IcmpCheckDefinition;
    case 'URL':
      return {
        ...base,
        checkType: 'URL',
        request: toUrlRequest(body.request as Partial<UrlRequest>),
        ...thresholds(URL_DEFAULT_DEGRADED_RESPONSE_TIME_MS, URL_DEFAULT_MAX_RESPONSE_TIME_MS),
      } satisfies UrlCheckDefinition;
    case 'SSL':
      return {
        ...base,
        checkType: 'SSL',
        request: toSslRequest(body.request as Partial<SslRequest>),
        ...thresholds(SSL_DEFAULT_DEGRADED_RESPONSE_TIME_MS, SSL_DEFAULT_MAX_RESPONSE_TIME_MS),
      } satisfies SslCheckDefinition;
    case 'BROWSER':
    case 'MULTI_STEP':
      return {
        ...base,
        checkType: stored.checkType,
        script: typeof body.script === 'string' ? body.script : '',
        dependencies: toDependencies(body.dependencies),
      } satisfies BrowserCheckDefinition | MultiStepCheckDefinition;
    case 'PLAYWRIGHT':
      return toPlaywrightDefinition(stored, base);
    case 'HEARTBEAT':
      // Never enqueued (see Dispatcher.enqueue): a heartbeat is pinged, not run.
      throw new Error(`heartbeat check ${stored.id} has no agent definition`);
    default:
      // No other type has a public endpoint yet; pass the body through so the agent can say so.
      return { ...body, ...base, checkType: stored.checkType };
  }
}

/** The files beside a browser or multistep script, path and content only. */
function toDependencies(deps: unknown): ScriptDependency[] {
  if (!Array.isArray(deps)) return [];
  return deps
    .filter((d): d is ScriptDependency => typeof d?.path === 'string' && typeof d?.content === 'string')
    .map(({ path, content }) => ({ path, content }));
}

/** Copies assertions field by field; the reference defaults regex to "", for the agent an empty pattern means none. */
function toAssertions<A extends AssertionOf<string, string>>(assertions: Partial<A>[] | undefined): A[] {
  return (assertions ?? []).map(
    (a) =>
      ({
        source: a.source,
        comparison: a.comparison,
        property: a.property ?? '',
        target: a.target ?? '',
        regex: a.regex ? a.regex : null,
      }) as A,
  );
}

function toApiRequest(request: Partial<ApiRequest>): ApiRequest {
  return {
    method: request.method ?? 'GET',
    url: request.url ?? '',
    followRedirects: request.followRedirects ?? true,
    skipSSL: request.skipSSL ?? false,
    ipFamily: request.ipFamily ?? 'IPv4',
    body: request.body ?? '',
    bodyType: request.bodyType ?? 'NONE',
    headers: (request.headers ?? []).map(({ key, value }) => ({ key, value })),
    queryParameters: (request.queryParameters ?? []).map(({ key, value }) => ({ key, value })),
    assertions: toAssertions(request.assertions),
    basicAuth: request.basicAuth ?? null,
    // Outpost extension: only when set, so jobs of checks without it stay as they were.
    ...(typeof request.maxResponseBytes === 'number' ? { maxResponseBytes: request.maxResponseBytes } : {}),
  };
}

function toTcpRequest(request: Partial<TcpRequest>): TcpRequest {
  return {
    hostname: request.hostname ?? '',
    port: request.port ?? 0,
    data: request.data ? request.data : null,
    ipFamily: request.ipFamily ?? 'IPv4',
    assertions: toAssertions(request.assertions),
    // Outpost's TLS extension; sent only when on, so a plain check's job reads as before.
    ...(request.tls === true
      ? { tls: true, tlsServerName: request.tlsServerName ?? null, skipSSL: request.skipSSL === true }
      : {}),
  };
}

function toDnsRequest(request: Partial<DnsRequest>): DnsRequest {
  return {
    query: request.query ?? '',
    recordType: request.recordType ?? 'A',
    nameServer: request.nameServer ? request.nameServer : null,
    port: typeof request.port === 'number' ? request.port : null,
    protocol: request.protocol ?? 'UDP',
    assertions: toAssertions(request.assertions),
    recursionDesired: request.recursionDesired !== false,
    edns: request.edns === true || request.dnssecOk === true,
    dnssecOk: request.dnssecOk === true,
  };
}

function toIcmpRequest(request: Partial<IcmpRequest>): IcmpRequest {
  return {
    hostname: request.hostname ?? '',
    ipFamily: request.ipFamily ?? 'IPv4',
    pingCount: typeof request.pingCount === 'number' ? request.pingCount : ICMP_PING_COUNT.default,
    assertions: toAssertions(request.assertions),
  };
}

function toUrlRequest(request: Partial<UrlRequest>): UrlRequest {
  return {
    method: 'GET',
    url: request.url ?? '',
    followRedirects: request.followRedirects ?? true,
    skipSSL: request.skipSSL ?? false,
    ipFamily: request.ipFamily ?? 'IPv4',
    assertions: toAssertions(request.assertions),
  };
}

/** The stored sslConfig with defaults filled (as PUT stores it), minus what the agent does not use. */
function toSslRequest(request: Partial<SslRequest>): SslRequest {
  const c = withSslDefaults((request.sslConfig ?? {}) as unknown as Record<string, unknown>) as unknown as SslConfig;
  const b = c.securityBaseline;
  return {
    sslConfig: {
      hostname: c.hostname ?? '',
      port: c.port,
      serverName: c.serverName ? c.serverName : null,
      ipFamily: c.ipFamily,
      skipChainValidation: c.skipChainValidation,
      handshakeTimeoutMs: c.handshakeTimeoutMs,
      alertDaysBeforeExpiry: c.alertDaysBeforeExpiry,
      securityBaseline: {
        enabled: b.enabled,
        minTLSVersion: b.minTLSVersion,
        minKeySizeBits: b.minKeySizeBits,
        weakSignatureAlgorithm: b.weakSignatureAlgorithm,
        weakCipherSuite: b.weakCipherSuite,
        recommendedTLSVersion: b.recommendedTLSVersion,
        recommendedKeySizeBits: b.recommendedKeySizeBits,
      },
    },
    assertions: toAssertions(request.assertions),
  };
}

function numberOr(value: unknown, fallback: number): number {
  return typeof value === 'number' ? value : fallback;
}
