/**
 * For tests of a console section before the real sign-in lands: registers the section behind a
 * stand-in guard that takes the account from a plain cookie (never in src/: it trusts the client).
 * The real guard (console session) sets `request.consoleAccountId` the same way for every route.
 */
import compress from '@fastify/compress';
import type { Service } from '../../src/service/app.ts';
import type { ConsoleSection } from '../../src/service/web/console/context.ts';

export const TEST_CONSOLE_COOKIE = 'outpost-test-console';
export const TEST_CSRF_TOKEN = 'test-csrf-token';

function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const [key, ...rest] = part.trim().split('=');
    if (key === name) return decodeURIComponent(rest.join('='));
  }
  return undefined;
}

/** A `beforeStart` that registers `section` behind the stand-in guard. */
export function behindTestGuard(section: ConsoleSection): (service: Service) => Promise<void> {
  return async (service) => {
    await service.app.register(async (app) => {
      // As inside webPages, where the lead registers console sections: compressed answers.
      await app.register(compress, { global: true, threshold: 1024 });
      app.decorateRequest('consoleAccountId', '');
      app.addHook('onRequest', async (request, reply) => {
        const accountId = cookieValue(request.headers.cookie, TEST_CONSOLE_COOKIE);
        if (!accountId) return reply.status(401).type('text/plain').send(`test guard: no ${TEST_CONSOLE_COOKIE} cookie`);
        request.consoleAccountId = accountId;
      });
      await app.register(section, service.webDeps);
    });
  };
}

/** The cookie a browser context adds to act as `accountId` under the stand-in guard. */
export function testConsoleCookie(serviceUrl: string, accountId: string) {
  return { name: TEST_CONSOLE_COOKIE, value: accountId, url: serviceUrl };
}
