/**
 * The console's page shell: a header with the sections and the sign-out form, then the page's content.
 * Sign-out is a POST form carrying the CSRF token, so a link on another site cannot sign anyone out.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ComponentChildren } from 'preact';
import { assetUrl } from '../assets.ts';
import { html } from '../html.ts';
import { renderPage } from '../layout.ts';
import { setPageHeaders } from '../page-headers.ts';

export const CONSOLE_SECTIONS = [
  { href: '/app/checks', label: 'Checks' },
  { href: '/app/locations', label: 'Private locations' },
  { href: '/app/alerts', label: 'Alerts' },
] as const;

export interface ConsolePage {
  title: string;
  accountId: string;
  csrfToken: string;
  /** The section link shown as current (its href). */
  current?: string;
  scripts?: string[];
  stylesheets?: string[];
  children: ComponentChildren;
}

export function renderConsolePage(page: ConsolePage): string {
  return renderPage({
    title: `${page.title} · Outpost`,
    bodyClass: 'console',
    // console.js: the live updates of any element with data-live-src (assets/console.js).
    scripts: [assetUrl('console.js'), ...(page.scripts ?? [])],
    stylesheets: [assetUrl('console.css'), ...(page.stylesheets ?? [])],
    children: html`
      <header class="site-header">
        <div class="inner">
          <strong>Outpost</strong>
          <nav aria-label="Console">
            ${CONSOLE_SECTIONS.map(
              (s) =>
                html`<a href=${s.href} aria-current=${page.current === s.href ? 'page' : undefined}>${s.label}</a> `,
            )}
          </nav>
          <span class="muted">Account ${page.accountId}</span>
          <form method="post" action="/app/sign-out">
            <input type="hidden" name="_csrf" value=${page.csrfToken} />
            <button type="submit">Sign out</button>
          </form>
        </div>
      </header>
      <main id="main" class="wide">
        <h1>${page.title}</h1>
        ${page.children}
      </main>`,
  });
}

/** Sends a console page of the signed-in account (the session guard set its account and CSRF token). */
export function sendConsolePage(
  request: FastifyRequest,
  reply: FastifyReply,
  page: Omit<ConsolePage, 'accountId' | 'csrfToken'>,
): FastifyReply {
  const body = renderConsolePage({ ...page, accountId: request.consoleAccountId, csrfToken: request.consoleCsrfToken });
  return setPageHeaders(reply).send(body);
}
