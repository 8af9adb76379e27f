/**
 * Signing in and out of the console. Sign-in takes an account id and one of its API keys, checked as
 * the public API checks them (http/auth.ts); every wrong pair gets the same message, and failures
 * are rate-limited per client address and per account (sign-in-limiter.ts). Both forms carry a CSRF
 * token, so another site can neither sign a browser in to its own account nor sign anyone out.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { Type } from 'typebox';
import { accountForApiKey } from '../../http/auth.ts';
import type { WebDeps } from '../deps.ts';
import { html } from '../html.ts';
import { renderPage } from '../layout.ts';
import { setPageHeaders } from '../page-headers.ts';
import { assetUrl } from '../assets.ts';
import { endSession, sessionAccount, startSession } from './session.ts';
import type { SignInLimiter } from './sign-in-limiter.ts';

export const WRONG_CREDENTIALS = 'That account id and API key do not match an account. Check both and try again.';
export const TOO_MANY_TRIES =
  'Too many failed sign-ins from here or for this account. Wait 15 minutes, then try again.';

/** Bounded, so an attacker's strings cannot grow the failure counts' memory; empty ones get the form again. */
const SignInBody = Type.Object({
  accountId: Type.Optional(Type.String({ maxLength: 200 })),
  apiKey: Type.Optional(Type.String({ maxLength: 200 })),
  _csrf: Type.Optional(Type.String()),
});

function sendSignInForm(
  reply: FastifyReply,
  csrfToken: string,
  opts: { status?: number; error?: string; accountId?: string } = {},
): FastifyReply {
  const body = renderPage({
    title: 'Sign in · Outpost',
    bodyClass: 'console sign-in',
    stylesheets: [assetUrl('console.css')],
    children: html`<main id="main" class="narrow">
      <h1>Sign in to the Outpost console</h1>
      ${opts.error ? html`<p class="form-error" role="alert">${opts.error}</p>` : null}
      <form method="post" action="/app/sign-in" class="card">
        <input type="hidden" name="_csrf" value=${csrfToken} />
        <label for="account-id">Account id</label>
        <input id="account-id" name="accountId" autocomplete="username" required value=${opts.accountId ?? ''} />
        <label for="api-key">API key</label>
        <input id="api-key" name="apiKey" type="password" autocomplete="current-password" required />
        <p><button type="submit">Sign in</button></p>
      </form>
      <p class="muted">Use an API key of the account (<code>outpost account create</code> prints the first one).</p>
    </main>`,
  });
  return setPageHeaders(reply.status(opts.status ?? 200)).send(body);
}

export function signInRoutes(fastify: FastifyInstance, deps: WebDeps, limiter: SignInLimiter): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.get('/app/sign-in', async (request, reply) => {
    if (await sessionAccount(deps.store, request)) return reply.redirect('/app/checks', 303);
    return sendSignInForm(reply, reply.generateCsrf());
  });

  app.post(
    '/app/sign-in',
    { schema: { body: SignInBody }, preValidation: app.csrfProtection },
    async (request, reply) => {
      const accountId = request.body.accountId?.trim() ?? '';
      const apiKey = request.body.apiKey?.trim() ?? '';
      const again = (status: number, error: string) =>
        sendSignInForm(reply, reply.generateCsrf(), { status, error, accountId });
      if (!accountId || !apiKey) return again(400, 'Enter both your account id and an API key of that account.');
      if (!limiter.allows(request.ip, accountId)) return again(429, TOO_MANY_TRIES);
      const account = await accountForApiKey(deps.store, accountId, apiKey);
      if (!account) {
        limiter.recordFailure(request.ip, accountId);
        return again(401, WRONG_CREDENTIALS);
      }
      await startSession(deps.store, deps.config, reply, account.id);
      return reply.redirect('/app/checks', 303);
    },
  );

  app.post('/app/sign-out', { preValidation: app.csrfProtection }, async (request, reply) => {
    await endSession(deps.store, deps.config, request, reply);
    return reply.redirect('/app/sign-in', 303);
  });
}
