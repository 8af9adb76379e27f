/**
 * Playwright check suites: POST /v1/checks/playwright, PUT /v1/checks/playwright/{id} (list, read
 * and delete are in checks.ts) and POST /v1/checks/playwright/{id}/trigger, which starts a run at
 * each of the check's private locations as a test session (CI=true). docs/suites.md.
 *
 * The archive travels in the JSON body as base64 (`codeBundle`): one request creates a working
 * check, and the archive is checked (a Playwright project: package.json, a lockfile, a
 * playwright.config) before anything is stored.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import { listSuiteArchive, projectProblems, SuiteArchiveError } from '../../shared/suite-archive.ts';
import type { ServiceHooks } from '../app.ts';
import type { ServiceConfig } from '../config.ts';
import {
  normalizePlaywrightBody,
  PlaywrightCheckCreateBody,
  PlaywrightCheckResponse,
  PlaywrightCheckUpdateBody,
  TEST_SESSION_FLAG,
  TriggerBody,
} from '../checks/playwright-check-schema.ts';
import { AutoAssignQuery, takeSubscriptions } from '../alert-channels/subscriber-subscriptions.ts';
import { BadRequestError } from '../http/errors.ts';
import type { Store } from '../store/store.ts';
import { SuiteBundleStore, type StoredBundle } from '../suites/bundle-store.ts';
import { loadSuiteServiceConfig, type SuiteServiceConfig } from '../suites/config.ts';
import { type CheckBodyBase, checkNotFound, loadCheckView, mergeUpdate, resolveCheckFields } from './check-writes.ts';
import { commonErrors, IdParams } from './schemas.ts';

const PATH = '/v1/checks/playwright';

/** Decodes, checks and stores the archive; a 400 naming body/codeBundle when it is not a suite. */
async function storeBundle(
  bundles: SuiteBundleStore,
  config: SuiteServiceConfig,
  accountId: string,
  base64: string,
  workingDir: string | null,
): Promise<StoredBundle> {
  if (!/^[A-Za-z0-9+/=\s]+$/.test(base64))
    throw new BadRequestError('body/codeBundle must be base64 (a tar.gz or zip archive of the project folder)');
  const bytes = Buffer.from(base64, 'base64');
  if (bytes.length > config.bundleMaxBytes) {
    throw new BadRequestError(
      `body/codeBundle is ${bytes.length} bytes, over the limit of ${config.bundleMaxBytes} (SUITE_BUNDLE_MAX_BYTES); leave node_modules out`,
    );
  }
  let files: string[];
  let format: StoredBundle['format'];
  try {
    const listing = await listSuiteArchive(bytes, {
      maxEntries: config.maxEntries,
      unpackedMaxBytes: config.unpackedMaxBytes,
    });
    files = listing.files;
    format = listing.format;
  } catch (err) {
    if (err instanceof SuiteArchiveError) throw new BadRequestError(`body/codeBundle: ${err.message}`);
    throw err;
  }
  const problems = projectProblems(files, workingDir);
  if (problems.length > 0)
    throw new BadRequestError(`body/codeBundle is not a Playwright project: ${problems.join('; ')}`);
  return bundles.put(accountId, bytes, format);
}

function withBundle(body: CheckBodyBase, bundle: StoredBundle | undefined): CheckBodyBase {
  if (!bundle) return body;
  return {
    ...body,
    codeBundlePath: bundle.path,
    cacheHash: bundle.sha256,
    codeBundleSize: bundle.size,
    codeBundleFormat: bundle.format,
  };
}

export const playwrightCheckRoutes: FastifyPluginAsync<{
  store: Store;
  hooks: ServiceHooks;
  config: ServiceConfig;
}> = async (app, { store, hooks, config }) => {
  const suites = config.suites ?? loadSuiteServiceConfig({}, config.dataDir);
  registerSuiteWrites(app, { store, hooks, suites, bundles: new SuiteBundleStore(suites.dir) });
  registerSuiteTrigger(app, store, hooks);
};

interface SuiteWriteDeps {
  store: Store;
  hooks: ServiceHooks;
  suites: SuiteServiceConfig;
  bundles: SuiteBundleStore;
}

/** POST and PUT: the archive in the body is checked and stored with the check. */
function registerSuiteWrites(fastify: FastifyInstance, { store, hooks, suites, bundles }: SuiteWriteDeps) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  // base64 is 4/3 of the archive; the rest of the body is small.
  const bodyLimit = Math.ceil((suites.bundleMaxBytes * 4) / 3) + 1024 * 1024;

  app.post(
    PATH,
    {
      bodyLimit,
      schema: {
        querystring: AutoAssignQuery,
        body: PlaywrightCheckCreateBody,
        response: { 201: PlaywrightCheckResponse, ...commonErrors },
      },
    },
    async (request, reply) => {
      const accountId = request.account.id;
      const subs = await takeSubscriptions(store, accountId, request.body as unknown as CheckBodyBase);
      const raw = subs.rest as CheckBodyBase;
      if (typeof raw.codeBundle !== 'string') {
        throw new BadRequestError(
          'body/codeBundle is required: the project folder (package.json, a lockfile, playwright.config, tests) as a base64 tar.gz or zip',
        );
      }
      const body = normalizePlaywrightBody(raw, suites.maxGlobalTimeoutSeconds);
      const bundle = await storeBundle(bundles, suites, accountId, raw.codeBundle, body.workingDir as string | null);
      const fields = await resolveCheckFields(store, accountId, 'PLAYWRIGHT', withBundle(body, bundle));
      const check = await store.checks.create({ accountId, ...fields });
      await subs.created({ checkId: check.id }, request.query.autoAssignAlerts);
      await hooks.checkChanged(accountId, check.id, check);
      return reply.status(201).send((await loadCheckView(store, check)) as never);
    },
  );

  app.put(
    `${PATH}/:id`,
    {
      bodyLimit,
      schema: {
        params: IdParams,
        querystring: AutoAssignQuery,
        body: PlaywrightCheckUpdateBody,
        response: { 200: PlaywrightCheckResponse, ...commonErrors },
      },
    },
    async (request) => {
      const accountId = request.account.id;
      const { id } = request.params as { id: string };
      const existing = await store.checks.get(accountId, id);
      if (existing?.checkType !== 'PLAYWRIGHT') throw checkNotFound();
      const subs = await takeSubscriptions(store, accountId, request.body as Record<string, unknown>);
      const patch = { ...subs.rest };
      // Derived from the archive: never taken from the body.
      for (const k of ['codeBundlePath', 'cacheHash', 'codeBundleSize', 'codeBundleFormat']) delete patch[k];
      // A new engine without a version means that engine's default, not the old version.
      if ('engine' in patch && !('engineVersion' in patch)) patch.engineVersion = null;
      const body = normalizePlaywrightBody(mergeUpdate(existing.body, patch), suites.maxGlobalTimeoutSeconds);
      const bundle =
        typeof patch.codeBundle === 'string'
          ? await storeBundle(bundles, suites, accountId, patch.codeBundle, body.workingDir as string | null)
          : undefined;
      const fields = await resolveCheckFields(store, accountId, 'PLAYWRIGHT', withBundle(body, bundle), existing.body);
      const updated = await store.checks.update(accountId, existing.id, fields);
      if (!updated) throw checkNotFound();
      await subs.updated({ checkId: updated.id });
      await hooks.checkChanged(accountId, updated.id, updated);
      return (await loadCheckView(store, updated)) as never;
    },
  );
}

/** POST {id}/trigger: a run at each of the check's private locations, by default as a test session. */
function registerSuiteTrigger(fastify: FastifyInstance, store: Store, hooks: ServiceHooks) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.post(
    `${PATH}/:id/trigger`,
    {
      schema: {
        params: IdParams,
        body: Type.Optional(TriggerBody),
        response: {
          201: Type.Object({
            checkId: Type.String(),
            testSession: Type.Boolean(),
            runs: Type.Array(
              Type.Object({
                runId: Type.String(),
                locationId: Type.String(),
                state: Type.String(),
                dueAt: Type.String(),
              }),
            ),
          }),
          ...commonErrors,
        },
      },
    },
    async (request, reply) => {
      const accountId = request.account.id;
      const { id } = request.params as { id: string };
      const check = await store.checks.get(accountId, id);
      if (check?.checkType !== 'PLAYWRIGHT') throw checkNotFound();
      if (!hooks.runNow) throw new Error('runNow hook is not wired (app.ts)');
      if (check.locationIds.length === 0) throw new BadRequestError('the check has no privateLocations to run at');
      const testSession = (request.body as { testSession?: boolean } | undefined)?.testSession !== false;
      // The mark travels only in this in-memory copy, into this run's snapshot.
      const marked = testSession ? { ...check, body: { ...check.body, [TEST_SESSION_FLAG]: true } } : check;
      const runs = [];
      for (const locationId of check.locationIds) {
        const run = await hooks.runNow(marked, locationId);
        runs.push({ runId: run.runId, locationId: run.locationId, state: run.state, dueAt: run.dueAt });
      }
      return reply.status(201).send({ checkId: check.id, testSession, runs });
    },
  );
}
