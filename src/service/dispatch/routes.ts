/**
 * HTTP side of the dispatcher:
 *  - the agent protocol under /agent/v1 (location-key auth), see docs/protocol.md;
 *  - the Sentry envelope endpoint agents send error reports to (report-token auth);
 *  - public API routes about runs and error reports (account auth).
 * Each group is its own encapsulated plugin so its auth hook and body parsers stay inside it.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { CHECK_TYPES } from '../../shared/checks/types.ts';
import {
  AGENT_PATHS,
  type HeartbeatRequest,
  type LeaseRequest,
  type RegisterRequest,
  type ReleaseRequest,
  type SubmitResultBatchRequest,
  type SubmitResultRequest,
} from '../../shared/protocol.ts';
import type { ServiceConfig } from '../config.ts';
import { useAccountAuth } from '../http/auth.ts';
import { NotFoundError, UnauthorizedError } from '../http/errors.ts';
import type { PrivateLocation, Run, Store } from '../store/store.ts';
import { type Dispatcher, RESULT_BATCH_MAX } from './dispatcher.ts';
import { sentryKeyOf } from './envelope.ts';
import { ERRORS_PREFIX, REPORT_PROJECT_ID } from './report-token.ts';

export interface AgentApiOptions {
  store: Store;
  config: ServiceConfig;
  dispatcher: Dispatcher;
}

// ---------------------------------------------------------------------------------------------
// Request schemas. Lenient where the agent may grow fields (additional properties pass), strict
// where the service relies on a value.

const AgentId = Type.String({ minLength: 1, maxLength: 100 });
const CheckTypeSchema = Type.Union(CHECK_TYPES.map((t) => Type.Literal(t)));
const Slots = Type.Object({
  uptime: Type.Integer({ minimum: 0, maximum: 1000, default: 0 }),
  heavy: Type.Integer({ minimum: 0, maximum: 1000, default: 0 }),
});
const LeaseRefSchema = Type.Object({ runId: Type.String({ minLength: 1 }), leaseId: Type.String() });

const RegisterBody = Type.Object({
  agentId: AgentId,
  version: Type.String({ maxLength: 100 }),
  protocolVersion: Type.Integer(),
  hostname: Type.String({ maxLength: 255 }),
  capabilities: Type.Object({
    checkTypes: Type.Array(CheckTypeSchema, { maxItems: 20 }),
    runtimes: Type.Array(Type.String({ maxLength: 100 }), { maxItems: 50, default: [] }),
  }),
  concurrency: Type.Optional(Slots),
});

const LeaseBody = Type.Object({
  agentId: AgentId,
  slots: Slots,
  waitSeconds: Type.Number({ minimum: 0, default: 0 }),
});

const HeartbeatBody = Type.Object({ agentId: AgentId, leases: Type.Array(LeaseRefSchema, { maxItems: 1000 }) });

const RunResultSchema = Type.Object({
  runId: Type.String({ minLength: 1 }),
  startedAt: Type.String(),
  stoppedAt: Type.String(),
  responseTime: Type.Number(),
  hasFailures: Type.Boolean(),
  hasErrors: Type.Boolean(),
});

const ResultBody = Type.Object({ agentId: AgentId, leaseId: Type.String(), result: RunResultSchema });

const ResultBatchBody = Type.Object({
  agentId: AgentId,
  results: Type.Array(Type.Object({ leaseId: Type.String(), result: RunResultSchema }), {
    minItems: 1,
    maxItems: RESULT_BATCH_MAX,
  }),
});

const ReleaseBody = Type.Object({
  agentId: AgentId,
  leases: Type.Array(
    Type.Object({ runId: Type.String({ minLength: 1 }), leaseId: Type.String(), reason: Type.String({ default: '' }) }),
    {
      maxItems: 1000,
    },
  ),
});

const DeregisterBody = Type.Object({ agentId: AgentId });

// ---------------------------------------------------------------------------------------------
// Agent protocol

interface AgentAuth {
  location: PrivateLocation;
  rawKey: string;
}

/** Per request; a WeakMap instead of a request decorator keeps the raw key off the request object (and out of logs). */
const agentAuth = new WeakMap<FastifyRequest, AgentAuth>();

function authOf(request: FastifyRequest): AgentAuth {
  const auth = agentAuth.get(request);
  if (!auth) throw new Error('agent route without the location-key hook');
  return auth;
}

const KEY_REJECTED =
  'The private location key was not accepted: it is unknown or was deleted. Set API_KEY to a current key of the location (pl_...)';

const protocolRoutes: FastifyPluginAsync<AgentApiOptions> = async (fastify, { store, dispatcher }) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.addHook('onRequest', async (request) => {
    const header = request.headers.authorization;
    const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
    const rawKey = match?.[1];
    if (!rawKey)
      throw new UnauthorizedError(`Missing private location key: send "Authorization: Bearer pl_...". ${KEY_REJECTED}`);
    const location = await store.locations.findByKey(rawKey);
    if (!location) throw new UnauthorizedError(KEY_REJECTED);
    agentAuth.set(request, { location, rawKey });
  });

  app.post(AGENT_PATHS.register, { schema: { body: RegisterBody } }, async (request) => {
    const { location, rawKey } = authOf(request);
    return dispatcher.register(location, rawKey, request.body as RegisterRequest);
  });

  app.post(AGENT_PATHS.lease, { schema: { body: LeaseBody } }, async (request, reply) => {
    // The agent may give up on a held request (timeout, shutdown). Then nothing must be claimed
    // for it: the runs would sit leased to nobody until the lease expired.
    const abort = new AbortController();
    const onClose = (): void => {
      if (!reply.raw.writableEnded) abort.abort();
    };
    reply.raw.on('close', onClose);
    try {
      return await dispatcher.lease(authOf(request).location, request.body as LeaseRequest, abort.signal);
    } finally {
      reply.raw.off('close', onClose);
    }
  });

  app.post(AGENT_PATHS.heartbeat, { schema: { body: HeartbeatBody } }, async (request) =>
    dispatcher.heartbeat(authOf(request).location, request.body as HeartbeatRequest),
  );

  app.post(AGENT_PATHS.results, { schema: { body: ResultBody } }, async (request) =>
    dispatcher.submitResult(authOf(request).location, request.body as unknown as SubmitResultRequest),
  );

  app.post(AGENT_PATHS.resultBatches, { schema: { body: ResultBatchBody } }, async (request) =>
    dispatcher.submitResultBatch(authOf(request).location, request.body as unknown as SubmitResultBatchRequest),
  );

  app.post(AGENT_PATHS.release, { schema: { body: ReleaseBody } }, async (request) =>
    dispatcher.release(authOf(request).location, request.body as ReleaseRequest),
  );

  app.post(AGENT_PATHS.deregister, { schema: { body: DeregisterBody } }, async (request) =>
    dispatcher.deregister(authOf(request).location, request.body),
  );
};

// ---------------------------------------------------------------------------------------------
// Sentry envelope endpoint

/** Sentry SDK bodies are small; this bounds what one report may cost. */
const ENVELOPE_BODY_LIMIT = 1024 * 1024;

const errorIngestRoutes: FastifyPluginAsync<AgentApiOptions> = async (fastify, { dispatcher }) => {
  // The Node SDK posts envelopes with no content type at all, browsers with text/plain, others with
  // application/x-sentry-envelope: take every body of this plugin's routes as raw bytes.
  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));

  const Params = Type.Object({ locationId: Type.String({ minLength: 1 }) });
  const paths = [
    // What the DSN from register makes the SDK post to (the project id must be numeric).
    `${ERRORS_PREFIX}/:locationId/api/${REPORT_PROJECT_ID}/envelope/`,
    // The location id in the project slot, for clients that build the URL by hand.
    `${ERRORS_PREFIX}/api/:locationId/envelope/`,
  ];
  for (const url of paths.flatMap((p) => [p, p.slice(0, -1)])) {
    fastify
      .withTypeProvider<TypeBoxTypeProvider>()
      .post(url, { schema: { params: Params }, bodyLimit: ENVELOPE_BODY_LIMIT }, async (request) => {
        const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
        const encoding = request.headers['content-encoding'];
        await dispatcher.ingestErrorEnvelope(
          request.params.locationId,
          sentryKeyOf(request.query, request.headers['x-sentry-auth']),
          body,
          typeof encoding === 'string' ? encoding : undefined,
        );
        return {};
      });
  }
};

// ---------------------------------------------------------------------------------------------
// Public API: runs and error reports

function runView(run: Run) {
  return {
    runId: run.runId,
    checkId: run.checkId,
    locationId: run.locationId,
    checkType: run.checkType,
    state: run.state,
    leaseAttempt: run.leaseAttempt,
    agentId: run.agentId,
    leaseExpiresAt: run.leaseExpiresAt,
    cancelRequested: run.cancelRequested,
    endReason: run.endReason,
    dueAt: run.dueAt,
    createdAt: run.createdAt,
    finishedAt: run.finishedAt,
  };
}

const publicRoutes: FastifyPluginAsync<AgentApiOptions> = async (fastify, { store, dispatcher }) => {
  useAccountAuth(fastify, store);
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const RunParams = Type.Object({ runId: Type.String({ minLength: 1 }) });

  app.get('/v1/check-runs/:runId', { schema: { params: RunParams } }, async (request) =>
    runView(await dispatcher.getRun(request.account.id, request.params.runId)),
  );

  app.post('/v1/check-runs/:runId/cancel', { schema: { params: RunParams } }, async (request) => {
    const run = await dispatcher.cancelRun(request.account.id, request.params.runId);
    return { runId: run.runId, state: run.state, cancelRequested: run.cancelRequested };
  });

  app.get(
    '/v1/private-locations/:id/error-reports',
    {
      schema: {
        params: Type.Object({ id: Type.String({ minLength: 1 }) }),
        querystring: Type.Object({ limit: Type.Integer({ minimum: 1, maximum: 500, default: 100 }) }),
      },
    },
    async (request) => {
      const location = await store.locations.get(request.account.id, request.params.id);
      if (!location) throw new NotFoundError('Private location not found');
      const reports = await store.errorReports.list(location.id, request.query.limit);
      return {
        length: reports.length,
        entries: reports.map((r) => ({ id: r.id, receivedAt: r.receivedAt, event: r.event })),
      };
    },
  );
};

/** The agent API and the dispatcher's public routes; registered by app.ts. */
export const agentApi: FastifyPluginAsync<AgentApiOptions> = async (app, opts) => {
  await app.register(protocolRoutes, opts);
  await app.register(errorIngestRoutes, opts);
  await app.register(publicRoutes, opts);
};
