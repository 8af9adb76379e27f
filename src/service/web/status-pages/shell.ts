/**
 * The frame every status page view shares: the page's logo (light and dark), name, link back to the
 * owner's site, its theme stylesheet, navigation (overview, history, feed, subscribe) and footer.
 */
import type { FastifyReply } from 'fastify';
import type { ComponentChildren } from 'preact';
import type { StatusPage } from '../../store/status-pages-types.ts';
import { assetUrl } from '../assets.ts';
import { html } from '../html.ts';
import { renderPage, type ThemeChoice } from '../layout.ts';
import { setPageHeaders } from '../page-headers.ts';
import type { OpenStatusPage } from './resolve.ts';
import { themeStylesheetUrl } from './theme-css.ts';

const THEMES: Record<StatusPage['defaultTheme'], ThemeChoice> = { AUTO: 'auto', LIGHT: 'light', DARK: 'dark' };

export const themeOf = (page: StatusPage): ThemeChoice => THEMES[page.defaultTheme];

/** The logo for the page's theme: with AUTO and both logos, the reader's colour scheme picks one. */
function logo(page: StatusPage) {
  const theme = themeOf(page);
  const light = page.logo ?? page.logoDark;
  const dark = page.logoDark ?? page.logo;
  if (!light || !dark) return null;
  const alt = `${page.name} logo`;
  if (theme !== 'auto' || light === dark)
    return html`<img class="logo" src=${theme === 'dark' ? dark : light} alt=${alt} />`;
  return html`<picture>
    <source srcset=${dark} media="(prefers-color-scheme: dark)" />
    <img class="logo" src=${light} alt=${alt} />
  </picture>`;
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

function header(found: OpenStatusPage) {
  const { page, base } = found;
  const mark = logo(page);
  return html`<header class="site-header sp-header">
    <div class="inner">
      ${page.redirectTo && mark ? html`<a href=${page.redirectTo}>${mark}</a>` : mark}
      <nav aria-label="Status page">
        <a href=${base}>Current status</a>
        <a href=${`${base}history`}>Incident history</a>
        <a href=${`${base}subscribe`}>Subscribe to updates</a>
        <a href=${`${base}feed.atom`}>Atom feed</a>
      </nav>
      ${page.redirectTo ? html`<a class="sp-back" href=${page.redirectTo}>Back to ${hostOf(page.redirectTo)}</a>` : null}
    </div>
  </header>`;
}

export interface StatusView {
  title: string;
  children: ComponentChildren;
}

export function renderStatusView(found: OpenStatusPage, view: StatusView): string {
  const { page, base } = found;
  return renderPage({
    title: view.title === page.name ? page.name : `${view.title} · ${page.name}`,
    theme: themeOf(page),
    stylesheets: [assetUrl('status-page.css'), themeStylesheetUrl(found)].filter((s): s is string => s !== null),
    favicon: page.favicon,
    description: page.description,
    alternates: [{ type: 'application/atom+xml', href: `${base}feed.atom`, title: `${page.name} incidents` }],
    bodyClass: 'status-page',
    children: html`${header(found)}
      <main id="main" class="narrow">${view.children}</main>
      <footer class="narrow sp-footer muted">
        ${page.whiteLabel ? null : html`<p>Powered by Outpost</p>`}
      </footer>`,
  });
}

/** Sends a view: public pages may be cached briefly; a private page's never are. */
export function sendStatusView(reply: FastifyReply, found: OpenStatusPage, view: StatusView): FastifyReply {
  return sendStatusHtml(reply, found, renderStatusView(found, view));
}

/** Sends a rendered view (renderStatusView's document) with the page's headers. */
export function sendStatusHtml(reply: FastifyReply, found: OpenStatusPage, document: string | Buffer): FastifyReply {
  const headers = found.page.isPrivate ? {} : { cacheSeconds: 30 };
  return setPageHeaders(reply, headers).send(document);
}
