/**
 * The document shell every page shares: language, title, theme, stylesheets, scripts and favicon.
 *
 * Themes: `data-theme` on <html> is `light`, `dark` or `auto`; assets/web.css gives each its colours and
 * `auto` follows the reader's `prefers-color-scheme` with no script. Pages add their own stylesheets
 * (a status page's theme colours, a dashboard's custom CSS) as URLs served by the service: the CSP allows
 * no inline style.
 */
import type { ComponentChildren } from 'preact';
import { html, renderDocument } from './html.ts';
import { assetUrl } from './assets.ts';

export type ThemeChoice = 'auto' | 'light' | 'dark';

export interface PageShell {
  title: string;
  theme?: ThemeChoice;
  /** Extra stylesheet URLs, after the base one. */
  stylesheets?: string[];
  /** Script URLs, loaded deferred: a page must work without them where it can. */
  scripts?: string[];
  favicon?: string | null;
  description?: string | null;
  /** <link rel="alternate"> for an Atom feed, for example. */
  alternates?: { type: string; href: string; title: string }[];
  /** Seconds after which a page without script reloads itself (a meta refresh); scripts do better. */
  refreshSeconds?: number;
  /** A class on <body> naming the kind of page: 'status-page', 'dashboard', 'console'. */
  bodyClass: string;
  children: ComponentChildren;
}

export function renderPage(shell: PageShell): string {
  const stylesheets = [assetUrl('web.css'), ...(shell.stylesheets ?? [])];
  return renderDocument(html`<html lang="en" data-theme=${shell.theme ?? 'auto'}>
    <head>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width, initial-scale=1" />
      <meta name="color-scheme" content=${shell.theme === 'light' ? 'light' : shell.theme === 'dark' ? 'dark' : 'light dark'} />
      <title>${shell.title}</title>
      ${shell.description ? html`<meta name="description" content=${shell.description} />` : null}
      ${shell.refreshSeconds ? html`<noscript><meta http-equiv="refresh" content=${String(shell.refreshSeconds)} /></noscript>` : null}
      <link rel="icon" href=${shell.favicon ?? assetUrl('favicon.svg')} />
      ${stylesheets.map((href) => html`<link rel="stylesheet" href=${href} />`)}
      ${(shell.alternates ?? []).map((a) => html`<link rel="alternate" type=${a.type} href=${a.href} title=${a.title} />`)}
      ${(shell.scripts ?? []).map((src) => html`<script src=${src} defer></script>`)}
    </head>
    <body class=${shell.bodyClass}>
      <a class="skip-link" href="#main">Skip to content</a>
      ${shell.children}
    </body>
  </html>`);
}
