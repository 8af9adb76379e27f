/**
 * The checks list (/app/checks): every check of the account with its state, type, locations, last run
 * and a sparkline of response times, filtered by a GET form that works without script. Its rows are
 * also served alone (/app/checks/live) for the live updates of console.js.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { WebDeps } from '../deps.ts';
import { html } from '../html.ts';
import {
  ALL_CHECK_TYPES,
  CHECK_STATES,
  CheckFilter,
  type CheckSummary,
  filterSummaries,
  loadCheckSummaries,
  stateInfo,
} from './check-summaries.ts';
import { timeOf } from './format.ts';
import { sendConsolePage } from './layout.ts';
import { LIVE_SECONDS, sendLiveContent } from './live.ts';
import { sparkline } from './sparkline.ts';

const COLUMNS = 6;

function checkRow(s: CheckSummary) {
  const state = stateInfo(s.state);
  return html`<tr>
    <th scope="row"><a href=${`/app/checks/${encodeURIComponent(s.check.id)}`}>${s.check.name}</a>
      ${s.tags.length > 0 ? html`<div class="tags">${s.tags.map((t) => html`<span class="tag">${t}</span> `)}</div>` : null}</th>
    <td><span class=${`state ${state.css}`}>${state.label}</span></td>
    <td>${s.check.checkType}</td>
    <td>${s.locationNames.length > 0 ? s.locationNames.join(', ') : html`<span class="muted">none</span>`}</td>
    <td>${timeOf(s.recent[0]?.createdAt)}</td>
    <td>${sparkline(s.recent.map((r) => r.responseTime).reverse())}</td>
  </tr>`;
}

function checkRows(list: readonly CheckSummary[], anyChecks: boolean) {
  if (list.length > 0) return list.map(checkRow);
  const message = anyChecks
    ? 'No check matches these filters.'
    : 'No checks yet: create one with the API (POST /v1/checks/api) and it appears here.';
  return [html`<tr><td colspan=${COLUMNS} class="empty">${message}</td></tr>`];
}

function option(value: string, label: string, selected: string | undefined) {
  return html`<option value=${value} selected=${value === (selected ?? '')}>${label}</option>`;
}

function filterForm(filter: CheckFilter, tags: string[]) {
  return html`<form method="get" action="/app/checks" class="filters" role="search" aria-label="Filter checks">
    <div><label for="filter-tag">Tag</label>
      <select id="filter-tag" name="tag">${option('', 'All tags', filter.tag)}${tags.map((t) => option(t, t, filter.tag))}</select></div>
    <div><label for="filter-type">Type</label>
      <select id="filter-type" name="type">${option('', 'All types', filter.type)}${ALL_CHECK_TYPES.map((t) => option(t, t, filter.type))}</select></div>
    <div><label for="filter-state">State</label>
      <select id="filter-state" name="state">${option('', 'All states', filter.state)}${CHECK_STATES.map((s) => option(s.value, s.label, filter.state))}</select></div>
    <div class="filter-actions"><button type="submit">Filter</button> <a href="/app/checks">Clear filters</a></div>
  </form>`;
}

/** The filters as a query string, for the live rows' URL. */
function filterQuery(filter: CheckFilter): string {
  const query = new URLSearchParams(Object.entries(filter).filter((e): e is [string, string] => Boolean(e[1])));
  return query.size > 0 ? `?${query}` : '';
}

export async function checksPage(fastify: FastifyInstance, deps: WebDeps): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.get('/app/checks', { schema: { querystring: CheckFilter } }, async (request, reply) => {
    const all = await loadCheckSummaries(deps.store, request.consoleAccountId);
    const shown = filterSummaries(all, request.query);
    const tags = [...new Set(all.flatMap((s) => s.tags))].sort();
    return sendConsolePage(request, reply, {
      title: 'Checks',
      current: '/app/checks',
      children: html`${filterForm(request.query, tags)}
        <table class="checks">
          <caption>${shown.length} of ${all.length} checks</caption>
          <thead><tr><th scope="col">Check</th><th scope="col">State</th><th scope="col">Type</th><th scope="col">Locations</th>
            <th scope="col">Last run</th><th scope="col">Response times</th></tr></thead>
          <tbody data-live-src=${`/app/checks/live${filterQuery(request.query)}`} data-live-seconds=${LIVE_SECONDS}>${checkRows(shown, all.length > 0)}</tbody>
        </table>`,
    });
  });

  app.get(
    '/app/checks/live',
    { schema: { querystring: CheckFilter }, config: { consoleActivity: false } },
    async (request, reply) => {
      const all = await loadCheckSummaries(deps.store, request.consoleAccountId);
      const rows = checkRows(filterSummaries(all, request.query), all.length > 0);
      return sendLiveContent(reply, rows);
    },
  );
}
