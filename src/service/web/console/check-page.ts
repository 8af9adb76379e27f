/**
 * A check's page (/app/checks/<id>): the settings it runs with (its definition as the API shows it,
 * secret values masked) and its result history, newest first, paged by the results' cursor, each
 * linking to its result page. Another account's check, like an unknown one, is the plain 404 page.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { placementOf } from '../../checks/group-of.ts';
import { BadRequestError } from '../../http/errors.ts';
import { anyCheckView } from '../../routes/checks.ts';
import type { StoredCheck, StoredResult } from '../../store/store.ts';
import type { WebDeps } from '../deps.ts';
import { html } from '../html.ts';
import { sendNotFoundPage } from '../not-found.ts';
import { stateInfo, stateOf, tagsOf } from './check-summaries.ts';
import { msOf, timeOf, verdictOf } from './format.ts';
import { sendConsolePage } from './layout.ts';
import { LIVE_SECONDS, sendLiveContent } from './live.ts';

const RESULTS_PER_PAGE = 25;

const Params = Type.Object({ checkId: Type.String({ minLength: 1, maxLength: 100 }) });
const Query = Type.Object({ before: Type.Optional(Type.String({ maxLength: 200 })) });

/** The result page another part of the console serves (results.ts). */
export const resultPageUrl = (checkId: string, resultId: string): string =>
  `/app/checks/${encodeURIComponent(checkId)}/results/${encodeURIComponent(resultId)}`;

function frequencyOf(check: StoredCheck): string {
  if (check.checkType === 'HEARTBEAT') return 'pinged by the monitored job';
  return check.frequency === 0 ? `every ${check.frequencyOffset ?? 0} seconds` : `every ${check.frequency} minutes`;
}

function resultRow(checkId: string, r: StoredResult) {
  const verdict = verdictOf(r.payload);
  return html`<tr>
    <th scope="row"><a href=${resultPageUrl(checkId, r.id)}>${timeOf(r.createdAt)}</a></th>
    <td><span class=${`state ${verdict.css}`}>${verdict.label}</span>${r.payload.error ? html` <span class="muted">${r.payload.error}</span>` : null}</td>
    <td>${r.runLocation}</td>
    <td>${msOf(r.payload.responseTime)}</td>
    <td>${r.resultType === 'ATTEMPT' ? 'a try that was retried' : `final (attempt ${r.attempts})`}</td>
  </tr>`;
}

function historyRows(checkId: string, entries: StoredResult[]) {
  if (entries.length === 0)
    return [
      html`<tr><td colspan="5" class="empty">No results yet: they appear here after the check's first run.</td></tr>`,
    ];
  return entries.map((r) => resultRow(checkId, r));
}

function historyTable(checkId: string, entries: StoredResult[], nextId: string | null, paged: boolean) {
  const base = `/app/checks/${encodeURIComponent(checkId)}`;
  // Only the newest page takes new results as they come; an older page stays as it was read.
  return html`<table class="results">
      <caption>Results, newest first</caption>
      <thead><tr><th scope="col">Time</th><th scope="col">Verdict</th><th scope="col">Location</th><th scope="col">Response time</th><th scope="col">Kind</th></tr></thead>
      <tbody data-live-src=${paged ? undefined : `${base}/live`} data-live-seconds=${paged ? undefined : LIVE_SECONDS}>${historyRows(checkId, entries)}</tbody>
    </table>
    <nav class="pager" aria-label="Result pages">
      ${paged ? html`<a href=${`${base}#history`}>Newest results</a> ` : null}
      ${nextId ? html`<a href=${`${base}?before=${encodeURIComponent(nextId)}#history`}>Older results</a>` : null}
    </nav>`;
}

/** A page of the check's results; `before` is the cursor an "Older results" link carries. */
async function resultPage(deps: WebDeps, accountId: string, checkId: string, before: string | undefined) {
  try {
    return await deps.store.results.list(accountId, checkId, {
      limit: RESULTS_PER_PAGE,
      nextId: before,
      resultType: 'ALL',
    });
  } catch (err) {
    if (err instanceof BadRequestError)
      throw new BadRequestError('querystring/before is not a cursor of an "Older results" link');
    throw err;
  }
}

export async function checkPage(fastify: FastifyInstance, deps: WebDeps): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.get('/app/checks/:checkId', { schema: { params: Params, querystring: Query } }, async (request, reply) => {
    const accountId = request.consoleAccountId;
    const check = await deps.store.checks.get(accountId, request.params.checkId);
    if (!check) return sendNotFoundPage(reply, 'check');
    const [status, subs, history] = await Promise.all([
      deps.store.checkStatuses.get(accountId, check.id),
      deps.store.alertChannels.checkSubscriptions(accountId, [check.id]),
      resultPage(deps, accountId, check.id, request.query.before),
    ]);
    const [locations, placement] = await Promise.all([
      deps.store.locations.list(accountId),
      placementOf(deps.store, check),
    ]);
    const state = stateInfo(stateOf(placement.activated, status));
    const definition = anyCheckView(check, deps.config.publicUrl, subs.get(check.id) ?? []);
    return sendConsolePage(request, reply, {
      title: check.name,
      current: '/app/checks',
      children: html`<p><a href="/app/checks">All checks</a></p>
        <h2>Settings</h2>
        <dl class="settings">
          <dt>State</dt><dd><span class=${`state ${state.css}`}>${state.label}</span>${placement.muted ? ' (muted)' : ''}</dd>
          <dt>Type</dt><dd>${check.checkType}</dd>
          <dt>Runs</dt><dd>${frequencyOf(check)}</dd>
          <dt>Locations</dt><dd>${
            locations
              .filter((l) => placement.locationIds.includes(l.id))
              .map((l) => l.name)
              .join(', ') || 'none'
          }</dd>
          <dt>Tags</dt><dd>${tagsOf(check).join(', ') || 'none'}</dd>
        </dl>
        <details>
          <summary>The whole definition (as the API returns it; secret values masked)</summary>
          <pre tabindex="0" aria-label="Check definition">${JSON.stringify(definition, null, 2)}</pre>
        </details>
        <h2 id="history">Result history</h2>
        ${historyTable(check.id, history.entries, history.nextId, request.query.before !== undefined)}`,
    });
  });

  app.get(
    '/app/checks/:checkId/live',
    { schema: { params: Params }, config: { consoleActivity: false } },
    async (request, reply) => {
      const check = await deps.store.checks.get(request.consoleAccountId, request.params.checkId);
      if (!check) return sendNotFoundPage(reply, 'check');
      const history = await resultPage(deps, request.consoleAccountId, check.id, undefined);
      return sendLiveContent(reply, historyRows(check.id, history.entries));
    },
  );
}
