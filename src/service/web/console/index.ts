/**
 * The operator console at /app: sign-in and sign-out, then every section behind the session guard.
 * Cookies and CSRF protection are registered here, so they apply to the console only.
 */
import cookie from '@fastify/cookie';
import csrf from '@fastify/csrf-protection';
import type { FastifyInstance } from 'fastify';
import type { WebDeps } from '../deps.ts';
import { alertsPage } from './alerts-page.ts';
import { checkPage } from './check-page.ts';
import { checksPage } from './checks-page.ts';
import type { ConsoleSection } from './context.ts';
import { consoleErrorHandler } from './error-page.ts';
import { locationsPage } from './locations-page.ts';
import { resultSection } from './result-page.ts';
import { consoleCookieOptions, sessionGuard } from './session.ts';
import { signInRoutes } from './sign-in.ts';
import { SignInLimiter } from './sign-in-limiter.ts';

/** The sections behind the session guard. */
const SECTIONS: ConsoleSection[] = [checksPage, checkPage, resultSection, locationsPage, alertsPage];

async function guardedConsole(app: FastifyInstance, deps: WebDeps): Promise<void> {
  app.decorateRequest('consoleAccountId', '');
  app.decorateRequest('consoleCsrfToken', '');
  app.addHook('onRequest', sessionGuard(deps.store));
  app.get('/app', async (_request, reply) => reply.redirect('/app/checks', 303));
  for (const section of SECTIONS) await app.register(section, deps);
}

export async function consoleRoutes(app: FastifyInstance, deps: WebDeps): Promise<void> {
  await app.register(cookie);
  await app.register(csrf, { cookieKey: 'outpost_console_csrf', cookieOpts: consoleCookieOptions(deps.config) });
  app.setErrorHandler(consoleErrorHandler);
  signInRoutes(app, deps, new SignInLimiter());
  await app.register(guardedConsole, deps);
}
