/** API checks (reference: ChecksV1ApiCheckCreate, CheckResultAPI): the job's definition and the result. */
import { type Static, Type } from 'typebox';
import { Assertion, AssertionResult } from './assertions.ts';
import { checkDefinition, IpFamily, KeyValue, responseTimeThresholds } from './common.ts';
import { Nullable } from './schema.ts';

export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'HEAD', 'DELETE', 'PATCH'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];
export const BODY_TYPES = ['JSON', 'FORM', 'RAW', 'GRAPHQL', 'NONE'] as const;
export type BodyType = (typeof BODY_TYPES)[number];

/** The largest `maxResponseBytes` an API check may set: 16 MiB, the agent's hard read limit. */
export const API_MAX_RESPONSE_BYTES_LIMIT = 16 * 1024 * 1024;

export const ApiRequest = Type.Object({
  method: Type.Enum(HTTP_METHODS),
  url: Type.String(),
  followRedirects: Type.Boolean(),
  skipSSL: Type.Boolean(),
  ipFamily: IpFamily,
  body: Type.String(),
  bodyType: Type.Enum(BODY_TYPES),
  headers: Type.Array(KeyValue),
  queryParameters: Type.Array(KeyValue),
  assertions: Type.Array(Assertion),
  basicAuth: Nullable(Type.Object({ username: Type.String(), password: Type.String() })),
  /**
   * Outpost extension: fail the run when the decoded response body is larger than this many bytes
   * (1 to API_MAX_RESPONSE_BYTES_LIMIT). Absent or null: no limit of the check's own (see docs/checks.md).
   */
  maxResponseBytes: Type.Optional(Nullable(Type.Number())),
});
export type ApiRequest = Static<typeof ApiRequest>;

export const ApiCheckDefinition = checkDefinition('API', { request: ApiRequest, ...responseTimeThresholds });
export type ApiCheckDefinition = Static<typeof ApiCheckDefinition>;

export const TimingPhases = Type.Object({
  wait: Type.Number(),
  dns: Type.Number(),
  tcp: Type.Number(),
  tls: Type.Number(),
  firstByte: Type.Number(),
  download: Type.Number(),
  total: Type.Number(),
});
export type TimingPhases = Static<typeof TimingPhases>;

/** The server certificate an API check saw on its https connection. Dates are ISO strings. */
export const ApiTlsDetails = Type.Object({
  subjectCN: Nullable(Type.String()),
  issuerCN: Nullable(Type.String()),
  validFrom: Nullable(Type.String()),
  validTo: Nullable(Type.String()),
  /** Whole days until validTo (negative once expired). */
  daysRemaining: Nullable(Type.Number()),
  fingerprint256: Nullable(Type.String()),
  /** Whether the chain and host name verified; false with skipSSL on a bad certificate. */
  authorized: Type.Optional(Type.Boolean()),
  /** The verification error code when not authorized, e.g. DEPTH_ZERO_SELF_SIGNED_CERT. */
  authorizationError: Type.Optional(Nullable(Type.String())),
  protocol: Type.Optional(Nullable(Type.String())),
  cipher: Type.Optional(Nullable(Type.String())),
});
export type ApiTlsDetails = Static<typeof ApiTlsDetails>;

const StringMap = Type.Record(Type.String(), Type.String());

const ApiResponse = Type.Object({
  status: Type.Number(),
  statusText: Type.String(),
  body: Type.String(),
  /** True when the body was cut at the documented cap. */
  bodyTruncated: Type.Optional(Type.Boolean()),
  /** Why the body could not be decoded as its Content-Encoding says (`body` is then empty). */
  bodyError: Type.Optional(Type.String()),
  /** The HTTP version spoken: '2' when the server chose h2 in ALPN, else '1.1'. */
  httpVersion: Type.Optional(Type.Enum(['2', '1.1'])),
  /** The peer certificate of an https response (also present when skipSSL let a bad certificate through). */
  tls: Type.Optional(ApiTlsDetails),
  headers: Nullable(StringMap),
  timings: Nullable(Type.Record(Type.String(), Type.Number())),
  timingPhases: Nullable(TimingPhases),
});

/** `apiCheckResult` of a check result, as in the reference's CheckResultAPI. */
export const ApiCheckResult = Type.Object({
  request: Type.Object({
    method: Type.String(),
    url: Type.String(),
    data: Type.String(),
    headers: StringMap,
    params: StringMap,
  }),
  response: Nullable(ApiResponse),
  assertions: Type.Array(AssertionResult),
  requestError: Nullable(Type.String()),
  jobLog: Nullable(Type.Record(Type.String(), Type.Unknown())),
  jobAssets: Nullable(Type.Array(Type.Unknown())),
});
export type ApiCheckResult = Static<typeof ApiCheckResult>;
