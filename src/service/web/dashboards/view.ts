/**
 * The dashboard page and its live region. Class names follow the reference's documented ones
 * (`.header`, `.logo`, `.status-summary--passing`, `.check`, `.check__result--failure`, `.check-list`,
 * `.pagination`, `.active-incident--major`, ...), so customCSS written for it applies here too.
 *
 * The region (incidents, summary, checks, pages) is also served alone as a fragment, which
 * assets/dashboard.js fetches every refreshRate seconds and swaps in: no full reload.
 */
import { html } from '../html.ts';
import { checkItemsHtml } from './check-item.ts';
import type { DashboardData } from './data.ts';

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

function Incidents({ data }: { data: DashboardData }) {
  if (data.incidents.length === 0) return null;
  return html`<section class="incidents-summary active-incident-list" aria-label="Open incidents">
    ${data.incidents.map(
      ({ incident, latest }) => html`<div class=${`active-incident active-incident--${incident.impact.toLowerCase()}`}>
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
      : html`<ul class="check-list" dangerouslySetInnerHTML=${{ __html: checkItemsHtml(data, urls) }}></ul>`;
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
  const logo = body.logo
    ? html`<img class="logo" src=${body.logo} alt=${body.link ? `${body.header}: home` : ''} />`
    : null;
  const title = body.showHeader ? html`<h1>${body.header}</h1>` : html`<h1 class="sr-only">${body.header}</h1>`;
  return html`<header class="header site-header">
    <div class="inner">
      ${logo && body.link ? html`<a href=${body.link}>${logo}</a>` : logo}
      ${title}
    </div>
  </header>`;
}

/**
 * The page's body: header, description and the live region with what the script needs to refresh it.
 * The region itself is not aria-live (a screen reader would read every check at every refresh); the
 * script puts a changed summary ("1 of 3 checks failing") in #dashboard-announce instead.
 */
export function DashboardBodyView({ data, urls }: { data: DashboardData; urls: DashboardUrls }) {
  const { body } = data;
  return html`<${Header} data=${data} />
    <main id="main" class=${`main dashboard-main ${body.width === '960PX' ? 'width-960' : 'width-full'}`}>
      ${body.showHeader && body.description ? html`<p class="dashboard-description">${body.description}</p>` : null}
      <p id="dashboard-announce" class="sr-only" role="status"></p>
      <div
        id="dashboard-region"
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
