/**
 * The dashboard page and its live region. Class names follow the reference's documented ones
 * (`.header`, `.logo`, `.status-summary--passing`, `.check`, `.check__result--failure`, `.check-list`,
 * `.pagination`, `.active-incident--major`, ...), so customCSS written for it applies here too.
 *
 * The region (incidents, summary, checks, pages) is also served alone as a fragment, which
 * assets/dashboard.js fetches every refreshRate seconds and swaps in: no full reload.
 */
import { html } from '../html.ts';
import type { CheckState, DashboardCheck, DashboardData } from './data.ts';

export interface DashboardUrls {
  /** Where the page is (`/dashboards/acme` or `/` of its custom domain). */
  page: string;
  /** The live region as a fragment; takes `?page=`. */
  region: string;
  /** The sanitized customCSS, or undefined when there is none. */
  customCss: string | undefined;
  /** The service's console, for showCheckRunLinks (absolute: a custom domain does not serve it). */
  console: string;
}

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
  const metric = (label: string, value: string) => html`<span class="metric"><span class="metric__label">${label}</span> ${value}</span>`;
  return html`<span class="check__metrics">
    ${metric('24h availability', formatAvailability(s?.availability))}
    ${metric('p50', formatMs(s?.p50Ms))}
    ${data.body.showP95 ? metric('p95', formatMs(s?.p95Ms)) : null}
    ${data.body.showP99 ? metric('p99', formatMs(s?.p99Ms)) : null}
  </span>`;
}

function CheckDetails({ check, data, urls }: { check: DashboardCheck; data: DashboardData; urls: DashboardUrls }) {
  const s = check.stats;
  const runLink =
    data.body.showCheckRunLinks && check.lastResultId
      ? html`<li><a href=${`${urls.console}/app/checks/${check.id}/results/${check.lastResultId}`}>Last run of ${check.name}</a></li>`
      : null;
  return html`<ul class="check__details">
    <li>Runs in 24 h: ${s?.runs ?? 0}${s && s.failures > 0 ? `, ${s.failures} failed` : ''}</li>
    <li>Average: ${formatMs(s?.avgMs)}</li>
    ${check.lastRunLocation ? html`<li>Last run: ${check.lastRunLocation}${check.lastRunAt ? html`, <time datetime=${check.lastRunAt}>${check.lastRunAt.slice(0, 16).replace('T', ' ')} UTC</time>` : null}</li>` : null}
    ${!data.body.hideTags && check.tags.length > 0 ? html`<li class="check__tags">Tags: ${check.tags.map((t) => html`<span class="tag">${t}</span> `)}</li>` : null}
    ${runLink}
  </ul>`;
}

function CheckItem({ check, data, urls }: { check: DashboardCheck; data: DashboardData; urls: DashboardUrls }) {
  const group = data.body.showGroupNames && check.groupName ? html`<span class="check__group">${check.groupName} / </span>` : null;
  return html`<li class=${`check check--${check.state}`} data-check-id=${check.id}>
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

function Incidents({ data }: { data: DashboardData }) {
  if (data.incidents.length === 0) return null;
  return html`<section class="incidents-summary active-incident-list" aria-label="Open incidents">
    ${data.incidents.map(
      ({ incident, latest }) => html`<div class=${`active-incident active-incident--${incident.impact.toLowerCase()}`} role="status">
        <p class="active-incident__header"><strong>${incident.impact === 'MAINTENANCE' ? 'Maintenance' : `${incident.impact === 'MAJOR' ? 'Major' : 'Minor'} incident`}:</strong> ${incident.name}</p>
        ${latest ? html`<p>${latest.status.charAt(0) + latest.status.slice(1).toLowerCase()}: ${latest.description}</p>` : null}
      </div>`,
    )}
  </section>`;
}

function summaryText({ counts, total }: DashboardData): string {
  if (total === 0) return 'No checks match this dashboard.';
  if (counts.failing > 0) return `${counts.failing} of ${total} checks failing`;
  const passing = counts.passing + counts.degraded;
  return passing === total ? 'All checks passing' : `${passing} of ${total} checks passing`;
}

function Summary({ data }: { data: DashboardData }) {
  const modifier = data.counts.failing > 0 ? 'failing' : 'passing';
  const degraded = data.counts.degraded > 0 ? ` · ${data.counts.degraded} degraded` : '';
  return html`<p class=${`status-summary status-summary--${modifier}`}>${summaryText(data)}${degraded}</p>`;
}

function Pagination({ data, urls }: { data: DashboardData; urls: DashboardUrls }) {
  if (data.pages < 2) return null;
  const pages = Array.from({ length: data.pages }, (_, i) => i + 1);
  return html`<nav class="pagination" aria-label="Pages of checks">
    <span>Page ${data.page} of ${data.pages}:</span>
    ${pages.map((p) => html` <a href=${`${urls.page}?page=${p}`} aria-current=${p === data.page ? 'page' : undefined}>${p}</a>`)}
  </nav>`;
}

/** The live region's content: what the script swaps in. */
export function DashboardRegion({ data, urls }: { data: DashboardData; urls: DashboardUrls }) {
  const list =
    data.checks.length === 0
      ? html`<p class="check-list check-list--empty">No checks to show.</p>`
      : html`<ul class="check-list">${data.checks.map((c) => html`<${CheckItem} check=${c} data=${data} urls=${urls} />`)}</ul>`;
  return html`<div class="dashboard-region" data-page=${String(data.page)} data-pages=${String(data.pages)}>
    <${Incidents} data=${data} />
    <${Summary} data=${data} />
    ${list}
    <${Pagination} data=${data} urls=${urls} />
    <p class="footer muted">Updated <time datetime=${data.generatedAt}>${data.generatedAt.slice(11, 19)} UTC</time></p>
  </div>`;
}

function Header({ data }: { data: DashboardData }) {
  const { body } = data;
  const logo = body.logo ? html`<img class="logo" src=${body.logo} alt=${body.link ? `${body.header}: home` : ''} />` : null;
  const title = body.showHeader ? html`<h1>${body.header}</h1>` : html`<h1 class="sr-only">${body.header}</h1>`;
  return html`<header class="header site-header">
    <div class="inner">
      ${logo && body.link ? html`<a href=${body.link}>${logo}</a>` : logo}
      ${title}
    </div>
  </header>`;
}

/** The page's body: header, description and the live region with what the script needs to refresh it. */
export function DashboardBodyView({ data, urls }: { data: DashboardData; urls: DashboardUrls }) {
  const { body } = data;
  return html`<${Header} data=${data} />
    <main id="main" class=${`main dashboard-main ${body.width === '960PX' ? 'width-960' : 'width-full'}`}>
      ${body.showHeader && body.description ? html`<p class="dashboard-description">${body.description}</p>` : null}
      <div
        id="dashboard-region"
        aria-live="polite"
        data-region-url=${urls.region}
        data-refresh-seconds=${String(body.refreshRate)}
        data-pagination-seconds=${String(body.paginate ? body.paginationRate : 0)}
      >
        <${DashboardRegion} data=${data} urls=${urls} />
      </div>
    </main>`;
}

/** The page a private dashboard shows without its key: a key field, and nothing of the dashboard. */
export function KeyRequiredView({ action, wrongKey }: { action: string; wrongKey: boolean }) {
  return html`<main id="main" class="narrow">
    <h1>Private dashboard</h1>
    <p>This dashboard needs its viewer key.${wrongKey ? ' The key given is not valid.' : ''}</p>
    <form method="get" action=${action}>
      <label for="dashboard-key">Viewer key</label>
      <input id="dashboard-key" name="key" type="password" autocomplete="current-password" required />
      <button type="submit">Open</button>
    </form>
  </main>`;
}
