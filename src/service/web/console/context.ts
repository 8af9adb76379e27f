/**
 * What every console page can rely on: the signed-in account (set by the session check that guards all
 * of /app except the sign-in page) and a CSRF token for its forms. session.ts sets both.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { WebDeps } from '../deps.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The console session's account id. Only read it in routes under the console's session guard. */
    consoleAccountId: string;
    /** The CSRF token every form of the page carries (`_csrf`), for renderConsolePage. */
    consoleCsrfToken: string;
  }
}

/** A console section (checks, results, locations, alerts): a plugin registered behind the session guard. */
export type ConsoleSection = FastifyPluginAsync<WebDeps>;
