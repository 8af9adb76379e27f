/**
 * The body of a DNS check (the reference's ChecksV1DnsMonitorCreate / ChecksV1DnsMonitorUpdate), as
 * TypeBox schemas built from the shared pieces in common-check-schema.ts. recordType takes the
 * reference's eight types plus PTR, SRV and CAA. No nameServer (or "") means the agent's system
 * resolver; no port means 53. Outpost extensions: `recursionDesired` (RD bit, default true), `edns`
 * (send an OPT record, default false) and `dnssecOk` (DO bit, default false; implies EDNS).
 */
import { Type } from 'typebox';
import {
  ASSERTION_COMPARISONS,
  DNS_ASSERTION_SOURCES,
  DNS_PROTOCOLS,
  DNS_RECORD_TYPES,
} from '../../shared/checks/types.ts';
import { Nullable } from '../routes/schemas.ts';
import {
  assertionList,
  checkSchemas,
  type Mode,
  PortSchema,
  prop,
  requestOnly,
  required,
} from './common-check-schema.ts';

export const DNS_DEFAULT_DEGRADED_RESPONSE_TIME_MS = 500;
export const DNS_DEFAULT_MAX_RESPONSE_TIME_MS = 1000;
export const DNS_RESPONSE_TIME_MAX_MS = 5000;
export const DNS_DEFAULT_PORT = 53;

function request(mode: Mode) {
  return Type.Object(
    {
      query: required(mode, Type.String({ minLength: 1, maxLength: 100 })),
      recordType: required(mode, Type.Enum([...DNS_RECORD_TYPES])),
      nameServer: Type.Optional(Nullable(Type.String({ maxLength: 100 }))),
      port: prop(mode, (o) => Nullable(PortSchema, o), DNS_DEFAULT_PORT),
      protocol: prop(mode, (o) => Type.Enum([...DNS_PROTOCOLS], o), 'UDP'),
      assertions: assertionList(mode, DNS_ASSERTION_SOURCES, ASSERTION_COMPARISONS),
      // Outpost extensions (the reference has no names for these), stored only when given: the
      // query's RD bit (absent: true), an EDNS(0) OPT record and its DNSSEC OK bit (absent: false;
      // dnssecOk implies EDNS).
      recursionDesired: Type.Optional(Type.Boolean()),
      edns: Type.Optional(Type.Boolean()),
      dnssecOk: Type.Optional(Type.Boolean()),
    },
    { additionalProperties: false },
  );
}

const LIMITS = {
  maximum: DNS_RESPONSE_TIME_MAX_MS,
  degraded: DNS_DEFAULT_DEGRADED_RESPONSE_TIME_MS,
  max: DNS_DEFAULT_MAX_RESPONSE_TIME_MS,
};
/** The bodies of POST and PUT, and a DNS check as GET returns it (ChecksV1DnsMonitor). */
export const {
  create: DnsCheckCreateBody,
  update: DnsCheckUpdateBody,
  response: DnsCheckResponse,
} = checkSchemas('DNS', LIMITS, requestOnly(request));
