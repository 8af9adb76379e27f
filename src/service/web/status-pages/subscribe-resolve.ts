/**
 * Which status page a subscribe request is for. The subscribe routes take this as a parameter so the
 * status page renderer's resolver (which also checks a private page's key) can be used instead; until
 * then this one finds public pages by url or by the request's Host, and treats a private page as not
 * there (a 404), never as subscribable without its key.
 */
import type { FastifyRequest } from 'fastify';
import type { SubscribablePage } from '../../store/status-pages-types.ts';
import type { Store } from '../../store/store.ts';
import { requestHost } from '../host.ts';

/** `slug` is the page's url from `/status/<url>/subscribe`; undefined means the page whose custom domain the request's Host is. */
export type ResolveSubscribePage = (request: FastifyRequest, slug: string | undefined) => Promise<SubscribablePage | undefined>;

export function resolvePublicPage(store: Store): ResolveSubscribePage {
  return async (request, slug) => {
    const page = await store.subscriptions.findSubscribablePage(slug === undefined ? { customDomain: requestHost(request) } : { url: slug });
    return page && !page.isPrivate ? page : undefined;
  };
}
