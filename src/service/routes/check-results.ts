/**
 * Results of a check, newest first, in the reference's CheckResult shape (GET /v2/check-results),
 * and one result (GET /v1/check-results/{checkId}/{checkResultId}, where alert messages link).
 * Paging uses the opaque `nextId` cursor the previous page returned; null means no further page.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import { NotFoundError } from '../http/errors.ts';
import type { StoredResult, Store } from '../store/store.ts';
import { commonErrors, Nullable } from './schemas.ts';

/**
 * The SQLite backend adds each row's sequence to the results it lists (see SequencedResult in
 * store/repos/results.ts); it is the public numeric checkRunId. Typed loosely here because
 * StoredResult in the Store contract does not carry it yet.
 */
type ListedResult = StoredResult & { sequence?: number };

const Params = Type.Object({ checkId: Type.String({ minLength: 1 }) });
const OneParams = Type.Object({ checkId: Type.String({ minLength: 1 }), checkResultId: Type.String({ minLength: 1 }) });
const Query = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 10 }),
  nextId: Type.Optional(Type.String({ minLength: 1 })),
  // As the reference: FINAL by default, the retried attempts only when asked (docs/api.md "Retries").
  resultType: Type.Enum(['FINAL', 'ATTEMPT', 'ALL'], { default: 'FINAL' }),
});

const CheckResultSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  checkId: Type.String(),
  hasFailures: Type.Boolean(),
  hasErrors: Type.Boolean(),
  isDegraded: Nullable(Type.Boolean()),
  isCancelled: Type.Boolean(),
  overMaxResponseTime: Nullable(Type.Boolean()),
  runLocation: Type.String(),
  startedAt: Nullable(Type.String({ format: 'date-time' })),
  stoppedAt: Nullable(Type.String({ format: 'date-time' })),
  created_at: Type.String({ format: 'date-time' }),
  responseTime: Type.Number(),
  // Free-form in the reference too (CheckResultAPI); serialized as stored.
  apiCheckResult: Nullable(Type.Object({}, { additionalProperties: true })),
  // Outpost extensions: the reference has no result objects for TCP, DNS and ICMP monitors.
  tcpCheckResult: Type.Optional(Type.Object({}, { additionalProperties: true })),
  dnsCheckResult: Type.Optional(Type.Object({}, { additionalProperties: true })),
  icmpCheckResult: Type.Optional(Type.Object({}, { additionalProperties: true })),
  // The reference's CheckResultSsl (SSL monitors); URL monitors fill apiCheckResult.
  sslCheckResult: Type.Optional(Type.Object({}, { additionalProperties: true })),
  // The reference's CheckResultBrowser and MultiStepResultBrowser (free-form here, as the agent sends them).
  browserCheckResult: Type.Optional(Nullable(Type.Object({}, { additionalProperties: true }))),
  multiStepCheckResult: Type.Optional(Nullable(Type.Object({}, { additionalProperties: true }))),
  /** Playwright check suites (the reference's CheckResultPlaywright plus per-test results; docs/suites.md). */
  playwrightCheckResult: Type.Optional(Type.Object({}, { additionalProperties: true })),
  /** Why the run failed, errored or was cancelled, in a sentence (null when it passed). */
  error: Type.Optional(Nullable(Type.String())),
  /** Everything else the agent measured: network diagnostics, TLS and DNS details, notes. */
  details: Type.Optional(Type.Object({}, { additionalProperties: true })),
  checkRunId: Type.Number(),
  attempts: Type.Number(),
  resultType: Type.Enum(['FINAL', 'ATTEMPT', 'ALL']),
  sequenceId: Nullable(Type.String()),
  traceId: Nullable(Type.String()),
});

const ListResponse = Type.Object({
  length: Type.Number(),
  entries: Type.Array(CheckResultSchema),
  nextId: Nullable(Type.String()),
});

export function checkResultView(result: ListedResult) {
  const p = result.payload;
  const {
    tcpCheckResult,
    dnsCheckResult,
    icmpCheckResult,
    sslCheckResult,
    browserCheckResult,
    multiStepCheckResult,
    playwrightCheckResult,
    ...details
  } = p.details ?? {};
  return {
    id: result.id,
    name: result.checkName,
    checkId: result.checkId,
    hasFailures: p.hasFailures,
    hasErrors: p.hasErrors,
    isDegraded: p.isDegraded,
    isCancelled: p.isCancelled,
    overMaxResponseTime: p.overMaxResponseTime,
    runLocation: result.runLocation,
    startedAt: p.startedAt,
    stoppedAt: p.stoppedAt,
    created_at: result.createdAt,
    responseTime: p.responseTime,
    apiCheckResult: p.apiCheckResult as Record<string, unknown> | null,
    ...(tcpCheckResult ? { tcpCheckResult: tcpCheckResult as unknown as Record<string, unknown> } : {}),
    ...(dnsCheckResult ? { dnsCheckResult: dnsCheckResult as unknown as Record<string, unknown> } : {}),
    ...(icmpCheckResult ? { icmpCheckResult: icmpCheckResult as unknown as Record<string, unknown> } : {}),
    ...(sslCheckResult ? { sslCheckResult: sslCheckResult as unknown as Record<string, unknown> } : {}),
    ...(browserCheckResult ? { browserCheckResult: browserCheckResult as unknown as Record<string, unknown> } : {}),
    ...(multiStepCheckResult
      ? { multiStepCheckResult: multiStepCheckResult as unknown as Record<string, unknown> }
      : {}),
    ...(playwrightCheckResult
      ? { playwrightCheckResult: playwrightCheckResult as unknown as Record<string, unknown> }
      : {}),
    error: p.error ?? null,
    ...(Object.keys(details).length > 0 ? { details } : {}),
    checkRunId: result.sequence ?? 0,
    attempts: result.attempts,
    resultType: result.resultType ?? 'FINAL',
    sequenceId: null,
    traceId: null,
  };
}

export const checkResultRoutes: FastifyPluginAsync<{ store: Store }> = async (fastify, { store }) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/v2/check-results/:checkId',
    { schema: { params: Params, querystring: Query, response: { 200: ListResponse, ...commonErrors } } },
    async (request) => {
      const accountId = request.account.id;
      const { checkId } = request.params;
      // Another account's check is a 404 like a missing one, never an empty list.
      if (!(await store.checks.get(accountId, checkId))) throw new NotFoundError('Check not found');
      const { limit, nextId, resultType } = request.query;
      const page = await store.results.list(accountId, checkId, { limit, resultType, ...(nextId ? { nextId } : {}) });
      const entries = page.entries.map(checkResultView);
      return { length: entries.length, entries, nextId: page.nextId };
    },
  );

  app.get(
    '/v1/check-results/:checkId/:checkResultId',
    { schema: { params: OneParams, response: { 200: CheckResultSchema, ...commonErrors } } },
    async (request) => {
      const { checkId, checkResultId } = request.params;
      // Scoped by account and check: another account's result, or another check's, is absent.
      const result = await store.results.get(request.account.id, checkId, checkResultId);
      if (!result) throw new NotFoundError('Check result not found');
      return checkResultView(result);
    },
  );
};
