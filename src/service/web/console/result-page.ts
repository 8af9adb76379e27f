/**
 * The console's page of one check result, `/app/checks/<checkId>/results/<resultId>`: the verdict,
 * where and by which agent it ran, a script's errors, the timing waterfall, every assertion with expected and actual
 * values, the response (headers and body, scrubbed on the agent before it was stored), the log, and
 * the artifacts, with the trace viewer beside it. Another account's result is the plain 404 page.
 */
import type { FastifyRequest } from 'fastify';
import type { RunResult } from '../../../shared/protocol.ts';
import type { StoredResult } from '../../store/store.ts';
import { assetUrl } from '../assets.ts';
import type { WebDeps } from '../deps.ts';
import { html } from '../html.ts';
import { sendNotFoundPage } from '../not-found.ts';
import { setPageHeaders } from '../page-headers.ts';
import { ArtifactsView } from './artifacts-view.ts';
import { AssertionsView, assertionsOf } from './assertions-view.ts';
import type { ConsoleSection } from './context.ts';
import { ErrorsView, errorsOf } from './errors-view.ts';
import { renderConsolePage } from './layout.ts';
import { LogsView, logLinesOf } from './logs-view.ts';
import { ResponseView, responseOf } from './response-view.ts';
import { resultArtifactRoutes } from './result-artifacts.ts';
import { traceViewerRoutes } from './trace-viewer.ts';
import { timingPhasesOf, Waterfall } from './waterfall.ts';

/** The CSRF token of the request's session, for the page's sign-out form (the session guard provides it). */
export type Verdict = 'passed' | 'failed' | 'degraded' | 'cancelled';

export function verdictOf(r: RunResult): Verdict {
  if (r.isCancelled) return 'cancelled';
  if (r.hasFailures || r.hasErrors) return 'failed';
  return r.isDegraded ? 'degraded' : 'passed';
}

const VERDICT_CLASS: Record<Verdict, string> = {
  passed: 'state-ok',
  failed: 'state-down',
  degraded: 'state-degraded',
  cancelled: 'state-none',
};

function SummaryView({ result, locationName }: { result: StoredResult; locationName: string | null }) {
  const r = result.payload;
  const verdict = verdictOf(r);
  return html`<dl class="result-summary">
    <div><dt>Verdict</dt><dd class=${`state verdict ${VERDICT_CLASS[verdict]}`}>${verdict}</dd></div>
    <div><dt>Location</dt><dd>${locationName ?? result.runLocation} <span class="muted">(${result.runLocation})</span></dd></div>
    <div><dt>Agent</dt><dd>${r.agent.id} <span class="muted">(version ${r.agent.version})</span></dd></div>
    <div><dt>Started</dt><dd><time datetime=${r.startedAt}>${r.startedAt}</time></dd></div>
    <div><dt>Response time</dt><dd>${Math.round(r.responseTime)} ms</dd></div>
    <div><dt>Attempt</dt><dd>${result.attempts}${result.resultType === 'ATTEMPT' ? ' (retried)' : ''}</dd></div>
    ${r.error ? html`<div class="result-error"><dt>Error</dt><dd>${r.error}</dd></div>` : null}
  </dl>`;
}

interface ResultParams {
  checkId: string;
  resultId: string;
}

async function renderResultPage(deps: WebDeps, request: FastifyRequest<{ Params: ResultParams }>, csrfToken: string) {
  const accountId = request.consoleAccountId;
  const { checkId, resultId } = request.params;
  const result = await deps.store.results.get(accountId, checkId, resultId);
  if (!result) return undefined;
  const artifacts = await deps.store.artifacts.listComplete(accountId, result.runId);
  // The location may have been deleted since: its slug, as stored with the result, still says where.
  const location = await deps.store.locations.get(accountId, result.locationId);
  const r = result.payload;
  return renderConsolePage({
    title: `Result of ${result.checkName}`,
    accountId,
    csrfToken,
    current: '/app/checks',
    stylesheets: [assetUrl('console-results.css')],
    children: html`
      <p><a href=${`/app/checks/${encodeURIComponent(checkId)}`}>Back to ${result.checkName}</a></p>
      <${SummaryView} result=${result} locationName=${location?.name ?? null} />
      <${ErrorsView} errors=${errorsOf(r)} />
      <${Waterfall} phases=${timingPhasesOf(r)} />
      <${AssertionsView} assertions=${assertionsOf(r)} />
      <${ResponseView} response=${responseOf(r)} />
      <${LogsView} lines=${logLinesOf(r)} />
      <${ArtifactsView} checkId=${checkId} resultId=${result.id} artifacts=${artifacts} />`,
  });
}

/** The result page, its artifacts and the trace viewer: register it behind the console's session guard. */
export const resultSection: ConsoleSection = async (app, deps) => {
  await app.register(traceViewerRoutes);
  await app.register(resultArtifactRoutes, deps);
  app.get<{ Params: ResultParams }>('/app/checks/:checkId/results/:resultId', async (request, reply) => {
    const page = await renderResultPage(deps, request, request.consoleCsrfToken);
    if (page === undefined) return sendNotFoundPage(reply, 'result');
    return setPageHeaders(reply).send(page);
  });
};
