/**
 * Playwright's trace viewer, the static web app that ships inside the `playwright-core` package
 * (lib/vite/traceViewer), served by the service at /app/trace-viewer/ behind the console session:
 * no outside service sees a trace. A trace opens with `?trace=<same-origin URL of the artifact>`;
 * the viewer's service worker fetches that URL (with the session cookie) and unzips it in the browser.
 *
 * Its own CSP (docs/architecture.md, "Web pages"): the console's strict policy plus what the viewer
 * cannot work without, and nothing more. `worker-src 'self'` for its service worker (sw.bundle.js);
 * `frame-src 'self' data:` for the DOM snapshots it shows in iframes (served by that service worker)
 * and the blank `data:` page it puts in an iframe before the first snapshot; `manifest-src 'self'`
 * for its web manifest; the inline scripts of its HTML pages by their SHA-256, and the one style
 * attribute of its popout page by its SHA-256 (`style-src-attr 'unsafe-hashes'`), both read from the
 * files, so an upgrade of playwright-core keeps them right. No 'unsafe-eval' and no 'unsafe-inline': its
 * React code sets styles through the DOM, which style-src does not govern.
 *
 * The policy's `connect-src 'self'` matters most on sw.bundle.js itself (a worker takes the CSP its
 * script came with): the viewer renders a trace's DOM snapshots as documents of this origin, so a
 * `?trace=` link to a forged trace on another site, or in a data: URL, would run its markup here.
 * The service worker may fetch only from this origin, where a trace is an artifact of the
 * session's own account.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';
import { contentSecurityPolicy, type PagePolicy } from '../page-headers.ts';

const require = createRequire(import.meta.url);

/** The viewer's files inside the installed playwright-core (a runtime dependency, kept in the image). */
export const TRACE_VIEWER_DIR = path.join(
  path.dirname(require.resolve('playwright-core/package.json')),
  'lib',
  'vite',
  'traceViewer',
);

export const TRACE_VIEWER_PREFIX = '/app/trace-viewer/';

const VIEWER_PAGES = ['index.html', 'snapshot.html'];

/** CSP hashes of what `pattern` captures in the viewer's HTML pages, read from the installed files. */
function inlineHashes(pattern: RegExp): string[] {
  return VIEWER_PAGES.flatMap((page) =>
    [...readFileSync(path.join(TRACE_VIEWER_DIR, page), 'utf8').matchAll(pattern)].map(
      (m) =>
        `'sha256-${createHash('sha256')
          .update(m[1] as string)
          .digest('base64')}'`,
    ),
  );
}

export const TRACE_VIEWER_POLICY: PagePolicy = {
  scriptSrc: inlineHashes(/<script>([\s\S]*?)<\/script>/g),
  extra: [
    "worker-src 'self'",
    "frame-src 'self' data:",
    "manifest-src 'self'",
    // The popout page (snapshot.html) sizes its iframe with a style attribute: that one value only.
    `style-src-attr 'unsafe-hashes' ${inlineHashes(/ style="([^"]*)"/g).join(' ')}`,
  ],
};

/** The viewer opening one trace; `traceUrl` is a same-origin path of the trace artifact. */
export function traceViewerUrl(traceUrl: string): string {
  return `${TRACE_VIEWER_PREFIX}index.html?${new URLSearchParams({ trace: traceUrl })}`;
}

/** Serves the viewer's files; register it behind the console's session guard. */
export async function traceViewerRoutes(app: FastifyInstance): Promise<void> {
  const csp = contentSecurityPolicy(TRACE_VIEWER_POLICY);
  await app.register(fastifyStatic, {
    root: TRACE_VIEWER_DIR,
    prefix: TRACE_VIEWER_PREFIX,
    // Other web plugins may register @fastify/static too; this one needs no reply.sendFile.
    decorateReply: false,
    // The UI-mode app beside it talks to a local test runner over WebSocket: not served.
    allowedPath: (pathname) => !pathname.includes('uiMode'),
    cacheControl: false,
    setHeaders(reply) {
      // The service worker script and the HTML take this policy as theirs; CSS and fonts ignore it.
      reply
        .header('content-security-policy', csp)
        .header('x-content-type-options', 'nosniff')
        .header('referrer-policy', 'same-origin')
        // The files change with playwright-core, not with a hash in every name: always revalidate.
        .header('cache-control', 'private, no-cache');
    },
  });
}
