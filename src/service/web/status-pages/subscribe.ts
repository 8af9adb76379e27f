/**
 * Subscribing from a public status page (docs/api.md "Subscriptions"): the form at
 * `/status/<url>/subscribe` and at `/subscribe` of the page's custom domain, and the confirm and
 * unsubscribe links of every message, `/subscriptions/{confirm,unsubscribe}/<token>` on PUBLIC_URL.
 *
 * A link's GET only shows a page with a button: mail scanners that fetch links must not confirm or
 * unsubscribe anyone. The unsubscribe POST is also RFC 8058's one-click target (List-Unsubscribe-Post).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { loadOutboundConfig } from '../../outbound/config.ts';
import { OutboundPolicy } from '../../outbound/policy.ts';
import { confirmationPolicy, loadSubscriptionConfig } from '../../subscriptions/config.ts';
import type { WebDeps } from '../deps.ts';
import { sendNotFoundPage } from '../not-found.ts';
import { setPageHeaders } from '../page-headers.ts';
import { fromSameSite, parseSubscribeForm } from './subscribe-form.ts';
import { SubmissionLimiter } from './subscribe-rate-limit.ts';
import { lookUpStatusPage, pagePath } from './resolve.ts';
import { subscriptionLinkRoutes } from './subscribe-links.ts';
import { crossSitePage, subscribeDonePage, subscribeFormPage, tooManyPage } from './subscribe-views.ts';

type SlugRequest = FastifyRequest<{ Params: { url?: string } }>;

export async function subscribeRoutes(app: FastifyInstance, deps: WebDeps): Promise<void> {
  const config = deps.config.subscriptions ?? loadSubscriptionConfig({});
  const outbound = new OutboundPolicy(deps.config.outbound ?? loadOutboundConfig({}));
  const limiter = new SubmissionLimiter();

  // The same lookup as the page itself: by url or Host, and a private page only with its key (its cookie
  // is scoped to the page's path, which the form's path is under).
  const found = async (request: SlugRequest, reply: FastifyReply) => {
    const lookup = await lookUpStatusPage(deps, request, reply);
    if (lookup.kind !== 'open') return lookup.kind;
    return { statusPage: lookup.found.page, backHref: pagePath(lookup.found) };
  };

  const showForm = async (request: SlugRequest, reply: FastifyReply) => {
    const target = await found(request, reply);
    if (target === 'sent') return reply;
    if (typeof target === 'string') return sendNotFoundPage(reply);
    return setPageHeaders(reply).send(subscribeFormPage({ ...target, confirmHours: config.confirmHours }));
  };

  const submit = async (request: SlugRequest, reply: FastifyReply) => {
    const target = await found(request, reply);
    if (target === 'sent') return reply;
    if (typeof target === 'string') return sendNotFoundPage(reply);
    if (!fromSameSite(request)) return setPageHeaders(reply.status(403)).send(crossSitePage(request.url));
    const waitSeconds = limiter.take(`${target.statusPage.id} ${request.ip}`);
    if (waitSeconds > 0)
      return setPageHeaders(reply.status(429).header('retry-after', String(waitSeconds))).send(
        tooManyPage(target.statusPage, target.backHref, waitSeconds),
      );
    const form = parseSubscribeForm(request.body, outbound);
    if (!form.ok) {
      return setPageHeaders(reply.status(400)).send(
        subscribeFormPage({ ...target, values: form.values, errors: form.errors, confirmHours: config.confirmHours }),
      );
    }
    const outcome = await deps.store.subscriptions.subscribe(target.statusPage, form.input, confirmationPolicy(config));
    if (outcome === 'created' || outcome === 'resent') deps.hooks.notificationsQueued?.();
    const { type, address, secret } = form.input;
    const shownSecret = outcome === 'created' ? secret : null;
    return setPageHeaders(reply).send(
      subscribeDonePage({ ...target, type, address, outcome, secret: shownSecret, confirmHours: config.confirmHours }),
    );
  };

  app.get('/status/:url/subscribe', showForm);
  app.post('/status/:url/subscribe', submit);
  // The page's custom domain: the lookup finds the page by Host (no page there: the plain 404).
  app.get('/subscribe', showForm);
  app.post('/subscribe', submit);
  await app.register(subscriptionLinkRoutes, { deps });
}
