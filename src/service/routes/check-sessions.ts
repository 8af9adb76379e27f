/**
 * Check sessions (the reference's "Check sessions"): POST /v2/check-sessions/trigger runs every
 * activated check its target selects now, one session per check; GET /v2/check-sessions/{id} reads
 * one, and …/completion holds the request until every run has a verdict (at most maxWaitSeconds,
 * then 408 with Retry-After, for the client to call again). The v1 forms are the same except that
 * v1 reports a cancelled session as TIMED_OUT; POST /v1/check-sessions/{id}/cancel cancels.
 * The work is in dispatch/check-sessions.ts; docs/api.md "Check sessions".
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { ServiceConfig } from '../config.ts';
import type { CheckSessions, SessionState, SessionTarget } from '../dispatch/check-sessions.ts';
import { BadRequestError, HttpError, NotFoundError } from '../http/errors.ts';
import { ApiErrorSchema, commonErrors, NoContent, Nullable } from './schemas.ts';

type Version = 'v1' | 'v2';

const Params = Type.Object({ checkSessionId: Type.String({ format: 'uuid' }) });
const TARGET_FILTERS = ['checkId', 'matchTags'] as const;

const TriggerBody = Type.Object({
  target: Type.Optional(
    Type.Object({
      checkId: Type.Optional(Type.Array(Type.String({ format: 'uuid' }), { maxItems: 1000 })),
      matchTags: Type.Optional(
        Type.Array(Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { minItems: 1, maxItems: 50 }), {
          maxItems: 50,
        }),
      ),
    }),
  ),
  refreshCache: Type.Optional(Type.Boolean({ default: false })),
});
const CancelBody = Type.Object({
  sequenceId: Type.Optional(Type.Array(Type.String({ format: 'uuid' }), { minItems: 1, maxItems: 1000 })),
});
const CompletionQuery = Type.Object({
  maxWaitSeconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 30, default: 30 })),
});

const ResultSchema = Type.Object({
  checkResultId: Type.String(),
  checkResultLink: Type.String(),
  checkId: Type.String(),
  checkType: Type.String(),
  name: Type.String(),
  runLocation: Type.String(),
  resultType: Nullable(Type.String()),
  hasErrors: Type.Boolean(),
  hasFailures: Type.Boolean(),
  isDegraded: Type.Boolean(),
  aborted: Type.Boolean(),
  isCancelled: Type.Boolean(),
  responseTime: Nullable(Type.Number()),
  startedAt: Nullable(Type.String()),
  stoppedAt: Nullable(Type.String()),
});
const SessionFields = {
  checkSessionId: Type.String(),
  checkSessionLink: Type.String(),
  checkId: Type.String(),
  checkType: Type.String(),
  name: Type.String(),
  status: Type.String(),
  startedAt: Type.String(),
  stoppedAt: Nullable(Type.String()),
  timeElapsed: Type.Number(),
  runLocations: Type.Array(Type.String()),
  runSource: Nullable(Type.String()),
};
const SessionSchema = Type.Object(SessionFields);
const SessionWithResults = Type.Object({ ...SessionFields, results: Type.Array(ResultSchema) });
const TriggerResponse = Type.Object({ sessions: Type.Array(SessionSchema) });

const noSession = () => new NotFoundError('No such check session.');

/** The 408 a completion request ends with while the session still runs (the reference's words). */
class StillRunningError extends HttpError {
  constructor() {
    super(408, 'Check session is still in progress, but maximum per-request wait time was exceeded. Please retry.');
  }
}

/** The reference's CheckSession. */
function sessionView(state: SessionState, version: Version, publicUrl: URL, nowMs: number) {
  const { session } = state;
  return {
    checkSessionId: session.id,
    checkSessionLink: new URL(`/${version}/check-sessions/${session.id}`, publicUrl).href,
    checkId: session.checkId,
    checkType: session.checkType,
    name: session.checkName,
    // v1 predates CANCELLED and reports it as TIMED_OUT (the reference's concepts/cancellation).
    status: version === 'v1' && state.status === 'CANCELLED' ? 'TIMED_OUT' : state.status,
    startedAt: session.startedAt,
    stoppedAt: state.stoppedAt,
    timeElapsed: Math.max(
      0,
      Date.parse(state.stoppedAt ?? new Date(nowMs).toISOString()) - Date.parse(session.startedAt),
    ),
    runLocations: [...new Set(state.runs.map((r) => r.runLocation))],
    runSource: session.runSource,
  };
}

/** One concise result per run that has a stored result, in the order of the session's runs. */
function resultsOf(state: SessionState, publicUrl: URL) {
  const { session } = state;
  return state.runs.flatMap((run) => {
    const r = run.result;
    if (!r) return [];
    const p = r.payload;
    return [
      {
        checkResultId: r.id,
        checkResultLink: new URL(`/app/checks/${session.checkId}/results/${r.id}`, publicUrl).href,
        checkId: session.checkId,
        checkType: session.checkType,
        name: session.checkName,
        runLocation: run.runLocation,
        resultType: r.resultType,
        hasErrors: p.hasErrors,
        hasFailures: p.hasFailures,
        isDegraded: p.isDegraded,
        aborted: false,
        isCancelled: p.isCancelled || run.verdict === 'cancelled',
        responseTime: Number.isFinite(p.responseTime) ? p.responseTime : null,
        startedAt: p.startedAt ?? null,
        stoppedAt: p.stoppedAt ?? null,
      },
    ];
  });
}

/** The target as given; a filter the reference does not define is refused rather than ignored (it would select every check). */
function targetOf(body: { target?: Record<string, unknown> } | undefined): SessionTarget {
  const target = body?.target ?? {};
  const unknown = Object.keys(target).find((k) => !(TARGET_FILTERS as readonly string[]).includes(k));
  if (unknown)
    throw new BadRequestError(`body/target/${unknown} is not a target filter; use ${TARGET_FILTERS.join(' or ')}`);
  return target as SessionTarget;
}

/** Aborts when the client goes away, so a held completion request stops reading the store. */
function abortOnClose(request: FastifyRequest, reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  reply.raw.once('close', () => controller.abort());
  request.raw.once('aborted', () => controller.abort());
  return controller.signal;
}

export const checkSessionRoutes: FastifyPluginAsync<{ sessions: CheckSessions; config: ServiceConfig }> = async (
  fastify,
  { sessions, config },
) => {
  for (const version of ['v1', 'v2'] as const) registerVersion(fastify, version, sessions, config.publicUrl);
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.post(
    '/v1/check-sessions/:checkSessionId/cancel',
    { schema: { params: Params, body: CancelBody, response: { 204: NoContent, ...commonErrors } } },
    async (request, reply) => {
      const state = await sessions.cancel(request.account.id, request.params.checkSessionId, request.body?.sequenceId);
      if (!state) throw noSession();
      return reply.status(204).send(null);
    },
  );
};

function registerVersion(fastify: FastifyInstance, version: Version, sessions: CheckSessions, publicUrl: URL): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const view = (state: SessionState) => sessionView(state, version, publicUrl, Date.now());
  // The reference's FindOneCheckSessionResponse: the session with its results so far.
  const full = (state: SessionState) => ({ ...view(state), results: resultsOf(state, publicUrl) });
  app.post(
    `/${version}/check-sessions/trigger`,
    {
      schema: { body: TriggerBody, response: { 201: TriggerResponse, ...commonErrors } },
      // v1's body is optional: no body selects every check, as `{}` does.
      preValidation: async (request) => {
        request.body ??= {};
      },
    },
    async (request, reply) => {
      const started = await sessions.trigger(
        request.account.id,
        targetOf(request.body as { target?: Record<string, unknown> }),
      );
      if (started.length === 0) throw new NotFoundError('No matching checks were found.');
      return reply.status(201).send({ sessions: started.map(view) });
    },
  );
  app.get(
    `/${version}/check-sessions/:checkSessionId`,
    { schema: { params: Params, response: { 200: SessionWithResults, ...commonErrors } } },
    async (request) => {
      const state = await sessions.state(request.account.id, request.params.checkSessionId);
      if (!state) throw noSession();
      return full(state);
    },
  );
  app.get(
    `/${version}/check-sessions/:checkSessionId/completion`,
    {
      schema: {
        params: Params,
        querystring: CompletionQuery,
        response: { 200: SessionWithResults, 408: ApiErrorSchema, ...commonErrors },
      },
    },
    async (request, reply) => {
      const waitMs = (request.query.maxWaitSeconds ?? 30) * 1000;
      const state = await sessions.completion(
        request.account.id,
        request.params.checkSessionId,
        waitMs,
        abortOnClose(request, reply),
      );
      if (!state) throw noSession();
      if (!state.done) {
        void reply.header('retry-after', '1');
        throw new StillRunningError();
      }
      return full(state);
    },
  );
}
