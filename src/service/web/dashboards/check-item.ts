/**
 * One check on a dashboard: its state, name and 24-hour figures in a <details> summary, and its
 * runs, average, last run and tags inside. Each check's HTML is kept once rendered, with what it
 * was rendered from: a refresh of 500 checks where few changed re-renders only those few.
 */
import { html, renderFragment } from '../html.ts';
import type { CheckState, DashboardCheck, DashboardData } from './data.ts';
import type { DashboardUrls } from './view.ts';

const STATE_LABEL: Record<CheckState, string> = {
  failing: 'Failing',
  degraded: 'Degraded',
  passing: 'Passing',
  pending: 'No runs yet',
  paused: 'Paused',
};

/** The reference's result modifiers: --passing, --failure, --degraded. */
const RESULT_CLASS: Record<CheckState, string> = {
  failing: 'check__result--failure',
  degraded: 'check__result--degraded',
  passing: 'check__result--passing',
  pending: 'check__result--pending',
  paused: 'check__result--paused',
};

export function formatMs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '–';
  return ms >= 1000 ? `${(ms / 1000).toFixed(ms >= 10_000 ? 0 : 1)} s` : `${Math.round(ms)} ms`;
}

export function formatAvailability(percent: number | null | undefined): string {
  if (percent === null || percent === undefined) return '–';
  return `${percent === 100 || percent === 0 ? percent : percent.toFixed(2)}%`;
}

/** Spans, not a <dl>: the figures sit in the check's <summary>, which holds phrasing content only. */
function Metrics({ check, data }: { check: DashboardCheck; data: DashboardData }) {
  const s = check.stats;
  const metric = (label: string, value: string) =>
    html`<span class="metric"><span class="metric__label">${label}</span> ${value}</span>`;
  return html`<span class="check__metrics">
    ${metric('24h availability', formatAvailability(s?.availability))}
    ${metric('p50', formatMs(s?.p50Ms))}
    ${data.body.showP95 ? metric('p95', formatMs(s?.p95Ms)) : null}
    ${data.body.showP99 ? metric('p99', formatMs(s?.p99Ms)) : null}
  </span>`;
}

function CheckDetails({ check, data, urls }: { check: DashboardCheck; data: DashboardData; urls: DashboardUrls }) {
  const s = check.stats;
  const last = check.lastRun;
  const runLink =
    data.body.showCheckRunLinks && last
      ? html`<li><a href=${`${urls.console}/app/checks/${check.id}/results/${last.resultId}`}>Last run of ${check.name}</a></li>`
      : null;
  return html`<ul class="check__details">
    <li>Runs in 24 h: ${s?.runs ?? 0}${s && s.failures > 0 ? `, ${s.failures} failed` : ''}</li>
    <li>Average: ${formatMs(s?.avgMs)}</li>
    ${last?.location ? html`<li>Last run: ${last.location}${last.at ? html`, <time datetime=${last.at}>${last.at.slice(0, 16).replace('T', ' ')} UTC</time>` : null}</li>` : null}
    ${!data.body.hideTags && check.tags.length > 0 ? html`<li class="check__tags">Tags: ${check.tags.map((t) => html`<span class="tag">${t}</span> `)}</li>` : null}
    ${runLink}
  </ul>`;
}

export function CheckItem({ check, data, urls }: { check: DashboardCheck; data: DashboardData; urls: DashboardUrls }) {
  const group =
    data.body.showGroupNames && check.groupName ? html`<span class="check__group">${check.groupName} / </span>` : null;
  return html`<li class=${`check check--${check.state}`}>
    <details open=${data.body.expandChecks} data-check-id=${check.id}>
      <summary>
        <span class=${`check__result ${RESULT_CLASS[check.state]}`}>${STATE_LABEL[check.state]}</span>
        <span class="check__name">${group}${check.name}</span>
        <${Metrics} check=${check} data=${data} />
      </summary>
      <${CheckDetails} check=${check} data=${data} urls=${urls} />
    </details>
  </li>`;
}

/** Rendered checks by dashboard and check; cleared whole when it grows past this (checks deleted long ago). */
const rendered = new Map<string, { from: string; html: string }>();
const MAX_RENDERED = 50_000;

function checkHtml(check: DashboardCheck, data: DashboardData, urls: DashboardUrls): string {
  const { showP95, showP99, hideTags, showGroupNames, expandChecks, showCheckRunLinks } = data.body;
  const from = JSON.stringify([
    check,
    showP95,
    showP99,
    hideTags,
    showGroupNames,
    expandChecks,
    showCheckRunLinks,
    urls.console,
  ]);
  const key = `${data.id}/${check.id}`;
  const hit = rendered.get(key);
  if (hit?.from === from) return hit.html;
  const out = renderFragment(html`<${CheckItem} check=${check} data=${data} urls=${urls} />`);
  if (rendered.size >= MAX_RENDERED) rendered.clear();
  rendered.set(key, { from, html: out });
  return out;
}

/** The page's checks as one HTML string of <li> elements (each escaped by preact when rendered). */
export function checkItemsHtml(data: DashboardData, urls: DashboardUrls): string {
  return data.checks.map((check) => checkHtml(check, data, urls)).join('');
}
