/**
 * The body of an SSL monitor (the reference's ChecksV1SslMonitorCreate / ChecksV1SslMonitorUpdate), as
 * TypeBox schemas built from the shared pieces in common-check-schema.ts. The agent connects to
 * sslConfig.hostname:port, completes a TLS handshake and reports the certificate chain
 * (src/agent/checks/ssl.ts). The security baseline takes the reference's nine rules; the agent
 * evaluates six of them (docs/checks.md "SSL monitors"), the others are stored for clients.
 */
import { type TSchema, Type } from 'typebox';
import {
  SSL_ASSERTION_COMPARISONS,
  SSL_ASSERTION_SOURCES,
  SSL_CERTIFICATE_PROPERTIES,
  SSL_CONNECTION_PROPERTIES,
} from '../../shared/checks/monitors.ts';
import { BadRequestError } from '../http/errors.ts';
import { Nullable } from '../routes/schemas.ts';
import {
  assertionList,
  checkSchemas,
  ipFamily,
  type Mode,
  prop,
  requestOnly,
  required,
} from './common-check-schema.ts';
import { clientTlsRequestProperties } from './client-tls.ts';

export const SSL_DEFAULT_DEGRADED_RESPONSE_TIME_MS = 3000;
export const SSL_DEFAULT_MAX_RESPONSE_TIME_MS = 10000;
export const SSL_RESPONSE_TIME_MAX_MS = 30000;
export const SSL_DEFAULTS = { port: 443, handshakeTimeoutMs: 10000, alertDaysBeforeExpiry: 20 } as const;
/** The reference's security baseline defaults, rule by rule. */
export const SSL_BASELINE_DEFAULTS = {
  enabled: true,
  minTLSVersion: { value: 'TLS1.2', severity: 'fail' },
  minKeySizeBits: { value: 2048, severity: 'fail' },
  weakSignatureAlgorithm: { severity: 'fail' },
  weakCipherSuite: { severity: 'fail' },
  knownBadCA: { severity: 'fail' },
  recommendedTLSVersion: { value: 'TLS1.3', severity: 'ignore' },
  recommendedKeySizeBits: { value: 3072, severity: 'ignore' },
  ocspMustStapleRespected: { severity: 'ignore' },
  sctPresent: { severity: 'ignore' },
} as const;

/** A host name or SNI name: no control characters, as the reference's pattern says. */
const HostText = Type.String({ minLength: 1, maxLength: 2048, pattern: '^[^\\x00-\\x1f\\x7f]*$' });
const Severity = (o: { default?: unknown }) => Type.Enum(['fail', 'degrade', 'ignore'], o);
const TlsVersion = (o: { default?: unknown }) => Type.Enum(['TLS1.2', 'TLS1.3'], o);
const KeySize = (o: { default?: unknown }) => Type.Integer({ minimum: 1024, maximum: 16384, ...o });

/** One baseline rule: its value (if it has one) and severity, with the reference's defaults on create. */
function rule(
  mode: Mode,
  severity: string,
  value?: { schema: (o: { default?: unknown }) => TSchema; fallback: unknown },
) {
  const props: Record<string, TSchema> = { severity: prop(mode, Severity, severity) };
  if (value) props.value = prop(mode, value.schema, value.fallback);
  return prop(mode, (o) => Type.Object(props, { additionalProperties: false, ...o }), {});
}

function securityBaseline(mode: Mode, o: { default?: unknown }) {
  return Type.Object(
    {
      enabled: prop(mode, (o) => Type.Boolean(o), true),
      minTLSVersion: rule(mode, 'fail', { schema: TlsVersion, fallback: 'TLS1.2' }),
      minKeySizeBits: rule(mode, 'fail', { schema: KeySize, fallback: 2048 }),
      weakSignatureAlgorithm: rule(mode, 'fail'),
      weakCipherSuite: rule(mode, 'fail'),
      knownBadCA: rule(mode, 'fail'),
      recommendedTLSVersion: rule(mode, 'ignore', { schema: TlsVersion, fallback: 'TLS1.3' }),
      recommendedKeySizeBits: rule(mode, 'ignore', { schema: KeySize, fallback: 3072 }),
      ocspMustStapleRespected: rule(mode, 'ignore'),
      sctPresent: rule(mode, 'ignore'),
    },
    { additionalProperties: false, ...o },
  );
}

function sslConfig(mode: Mode) {
  return Type.Object(
    {
      hostname: required(mode, HostText),
      port: prop(mode, (o) => Type.Integer({ minimum: 1, maximum: 65535, ...o }), SSL_DEFAULTS.port),
      // "" and null both mean "send the hostname".
      serverName: Type.Optional(Nullable(Type.String({ maxLength: 2048, pattern: '^[^\\x00-\\x1f\\x7f]*$' }))),
      ipFamily: ipFamily(mode),
      skipChainValidation: prop(mode, (o) => Type.Boolean(o), false),
      handshakeTimeoutMs: prop(
        mode,
        (o) => Type.Integer({ minimum: 1000, maximum: 30000, ...o }),
        SSL_DEFAULTS.handshakeTimeoutMs,
      ),
      alertDaysBeforeExpiry: prop(
        mode,
        (o) => Type.Integer({ minimum: 1, maximum: 365, ...o }),
        SSL_DEFAULTS.alertDaysBeforeExpiry,
      ),
      securityBaseline: prop(mode, (o) => securityBaseline(mode, o), {}),
      clientCertificateMode: Type.Optional(Type.Enum(['auto', 'explicit'])),
    },
    { additionalProperties: false },
  );
}

function request(mode: Mode) {
  return Type.Object(
    {
      sslConfig: required(mode, sslConfig(mode)),
      // mTLS (clientCertificateMode above) and a per-check CA bundle (checks/client-tls.ts).
      ...clientTlsRequestProperties(),
      assertions: assertionList(mode, SSL_ASSERTION_SOURCES, SSL_ASSERTION_COMPARISONS),
    },
    { additionalProperties: false },
  );
}

const LIMITS = {
  maximum: SSL_RESPONSE_TIME_MAX_MS,
  degraded: SSL_DEFAULT_DEGRADED_RESPONSE_TIME_MS,
  max: SSL_DEFAULT_MAX_RESPONSE_TIME_MS,
};
/** The bodies of POST and PUT, and an SSL monitor as GET returns it (ChecksV1SslMonitor). */
export const {
  create: SslCheckCreateBody,
  update: SslCheckUpdateBody,
  response: SslCheckResponse,
} = checkSchemas('SSL', LIMITS, requestOnly(request));

const PROPERTIES: Record<string, readonly string[]> = {
  CERTIFICATE: SSL_CERTIFICATE_PROPERTIES,
  CONNECTION: SSL_CONNECTION_PROPERTIES,
};

/**
 * What the schema cannot say: the reference runs SSL monitors once a minute at most, and CERTIFICATE /
 * CONNECTION assertions name a known field. Client certificates are checked in checks/client-tls.ts.
 */
export function normalizeSslBody<B extends Record<string, unknown>>(body: B): B {
  const config = ((body.request as { sslConfig?: Record<string, unknown> } | undefined)?.sslConfig ?? {}) as Record<
    string,
    unknown
  >;
  if (typeof config.hostname !== 'string' || config.hostname === '') {
    throw new BadRequestError('body/request/sslConfig/hostname is required: the host name or IP address to connect to');
  }
  if (body.frequency === 0)
    throw new BadRequestError('body/frequency must be 1 or more: SSL monitors run at most once a minute');
  const request = (body.request ?? {}) as {
    sslConfig?: Record<string, unknown>;
    sslClientCertificateId?: unknown;
    assertions?: unknown;
  };
  const assertions = (request.assertions ?? []) as Array<{ source: string; property?: string }>;
  for (const [i, a] of assertions.entries()) {
    const known = PROPERTIES[a.source];
    if (known && !known.includes((a.property ?? '').trim())) {
      throw new BadRequestError(
        `body/request/assertions/${i}/property must be one of ${known.join(', ')} for ${a.source}, got "${(a.property ?? '').slice(0, 100)}"`,
      );
    }
  }
  return { ...body, request: { ...request, sslConfig: withSslDefaults(config) } };
}

/**
 * A PUT replaces sslConfig as a whole (its hostname is required, as in the reference): what it leaves
 * out takes the defaults, rule by rule, so GET shows the same complete shape as after POST.
 */
export function withSslDefaults(config: Record<string, unknown>): Record<string, unknown> {
  const given = (config.securityBaseline ?? {}) as Record<string, unknown>;
  const baseline: Record<string, unknown> = { enabled: given.enabled ?? SSL_BASELINE_DEFAULTS.enabled };
  for (const [name, fallback] of Object.entries(SSL_BASELINE_DEFAULTS)) {
    if (name !== 'enabled') baseline[name] = { ...(fallback as object), ...((given[name] ?? {}) as object) };
  }
  return {
    port: SSL_DEFAULTS.port,
    ipFamily: 'IPv4',
    skipChainValidation: false,
    handshakeTimeoutMs: SSL_DEFAULTS.handshakeTimeoutMs,
    alertDaysBeforeExpiry: SSL_DEFAULTS.alertDaysBeforeExpiry,
    ...config,
    securityBaseline: baseline,
  };
}
