/**
 * What every check in a job carries, whatever its type, and the small shapes several types share.
 * Property names follow the published API (../shared/reference/openapi-subset.json) so that a
 * stored check and a job payload read the same way.
 */
import { type Static, type TProperties, Type } from 'typebox';
import { Nullable } from './schema.ts';

/** Check types the protocol knows about. Issue-by-issue, more of them get a runner on the agent. */
export const CHECK_TYPES = ['API', 'TCP', 'DNS', 'ICMP', 'BROWSER', 'MULTI_STEP', 'PLAYWRIGHT', 'URL', 'SSL'] as const;
export type CheckType = (typeof CHECK_TYPES)[number];

/**
 * Uptime checks are cheap protocol probes; heavy checks run user code or a browser. The agent keeps a
 * separate concurrency for each, so a slow browser check never delays a ping.
 */
export type CheckClass = 'uptime' | 'heavy';
export function checkClassOf(type: CheckType): CheckClass {
  return type === 'API' || type === 'TCP' || type === 'DNS' || type === 'ICMP' || type === 'URL' || type === 'SSL'
    ? 'uptime'
    : 'heavy';
}

export const IP_FAMILIES = ['IPv4', 'IPv6'] as const;
export const IpFamily = Type.Enum(IP_FAMILIES);
export type IpFamily = Static<typeof IpFamily>;

/** A header or query parameter. */
export const KeyValue = Type.Object({
  key: Type.String(),
  value: Type.String(),
  locked: Type.Optional(Type.Boolean()),
});
export type KeyValue = Static<typeof KeyValue>;

/** The runtime of a check whose check, group and account name none. */
export const DEFAULT_RUNTIME_ID = '2026.04';

/** An environment variable as a job carries it (account, group and check levels already merged). */
export const EnvironmentVariable = Type.Object({
  key: Type.String(),
  value: Type.String(),
  secret: Type.Boolean(),
});
export type EnvironmentVariable = Static<typeof EnvironmentVariable>;

/** A check's own TLS material (docs/api.md "Client certificates"). */
export const CheckTlsMaterial = Type.Object({
  /** PEM certificates trusted in addition to the agent's default roots (the check's sslCaBundle and the certificate's `ca`). */
  ca: Type.Optional(Type.Array(Type.String())),
  /** The client certificate (PEM, chain allowed) and its private key, presented when the server asks. */
  cert: Type.Optional(Type.String()),
  key: Type.Optional(Type.String()),
  passphrase: Type.Optional(Nullable(Type.String())),
  /** The id of the client certificate used, for the result's diagnosis. */
  clientCertificateId: Type.Optional(Type.String()),
});
export type CheckTlsMaterial = Static<typeof CheckTlsMaterial>;

/** A setup or teardown step: inline Node.js code or a snippet id, and whose it is. */
export const ScriptRef = Type.Object({
  from: Type.Enum(['group', 'check']),
  script: Nullable(Type.String()),
  snippetId: Nullable(Type.Number()),
});
export type ScriptRef = Static<typeof ScriptRef>;

const checkBaseProperties = {
  id: Type.String(),
  accountId: Type.String(),
  name: Type.String(),
  checkType: Type.Enum(CHECK_TYPES),
  /** Whether a failing run is the expected outcome (the reference's `shouldFail`). */
  shouldFail: Type.Boolean(),
  /**
   * The runtime user code runs in. For a check that runs user code (scripts, browser types) the
   * service resolves it: the check's, else its group's, else the account default (DEFAULT_RUNTIME_ID).
   * Other checks carry what the check or group names, or null (no runtime needed).
   */
  runtimeId: Nullable(Type.String()),
  /** Set for a check in a group: the group's id (src/service/checks/group-merge.ts applies its settings). */
  groupId: Type.Optional(Type.Number()),
  /**
   * TLS material of the check's own (API checks, URL and SSL monitors): a client certificate for
   * mutual TLS and/or extra trusted CAs. The key and passphrase are plain only in the job the agent
   * leases (sealed in the service's snapshot); the agent scrubs them from all it sends. Absent: none.
   */
  tls: Type.Optional(CheckTlsMaterial),
  /**
   * The variables user code sees in process.env: the account's, then the group's, then the check's
   * (a later level replaces an earlier one with the same key). Values are plain text in the job; the
   * agent scrubs every `secret` one from all it sends (src/agent/scrub/). Absent means none.
   */
  environmentVariables: Type.Optional(Type.Array(EnvironmentVariable)),
  /**
   * The setup code to run before the request, snippets already resolved to their code by the
   * service: the group's step, then the check's, each in its own block (see docs/secrets.md).
   * null or absent: no setup.
   */
  localSetupScript: Type.Optional(Nullable(Type.String())),
  /** The teardown code, resolved likewise: the check's step, then the group's. null or absent: none. */
  localTearDownScript: Type.Optional(Nullable(Type.String())),
  /** Setup and teardown code in run order (setup: group then check; teardown: check then group). */
  scripts: Type.Optional(Type.Object({ setup: Type.Array(ScriptRef), tearDown: Type.Array(ScriptRef) })),
};

/** What every check in a job carries, whatever its type. */
export const CheckBase = Type.Object(checkBaseProperties);
export type CheckBase = Static<typeof CheckBase>;

/** A check type's definition in a job: the base properties, its checkType, and its own properties. */
export function checkDefinition<K extends CheckType, P extends TProperties>(checkType: K, own: P) {
  return Type.Object({ ...checkBaseProperties, checkType: Type.Literal(checkType), ...own });
}

/** The response-time thresholds (ms) of the uptime checks: degraded above the first, failed above the second. */
export const responseTimeThresholds = {
  degradedResponseTime: Type.Number(),
  maxResponseTime: Type.Number(),
};
