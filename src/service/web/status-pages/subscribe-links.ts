/**
 * The confirm and unsubscribe links of subscriber messages. The token is the whole authority (random,
 * looked up by its hash), so these POSTs need no same-site check: a mail provider's one-click
 * unsubscribe (RFC 8058) posts `List-Unsubscribe=One-Click` from its own servers.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { LinkTokenPurpose } from '../../store/status-pages-types.ts';
import { CONFIRM_PATH, UNSUBSCRIBE_PATH } from '../../subscriptions/links.ts';
import { isWellFormedLinkToken } from '../../subscriptions/tokens.ts';
import type { WebDeps } from '../deps.ts';
import { setPageHeaders } from '../page-headers.ts';
import { tokenActionPage, tokenDonePage, tokenInvalidPage } from './subscribe-views.ts';

type TokenRequest = FastifyRequest<{ Params: { token: string } }>;

const invalid = (reply: FastifyReply) => setPageHeaders(reply.status(404)).send(tokenInvalidPage());

/** RFC 8058's body (`List-Unsubscribe=One-Click`) says nothing the URL does not; a form button's is empty. */
const ONE_CLICK_BODY_LIMIT = 4096;

export async function subscriptionLinkRoutes(app: FastifyInstance, { deps }: { deps: WebDeps }): Promise<void> {
  const subscriptions = deps.store.subscriptions;
  // Mail providers may post the one-click body as multipart/form-data: read it (bounded) and ignore it.
  app.addContentTypeParser(
    'multipart/form-data',
    { parseAs: 'string', bodyLimit: ONE_CLICK_BODY_LIMIT },
    (_request, _body, done) => done(null, null),
  );

  const show = (purpose: LinkTokenPurpose) => async (request: TokenRequest, reply: FastifyReply) => {
    const { token } = request.params;
    const found = isWellFormedLinkToken(token)
      ? await subscriptions.findByToken(token, purpose, new Date())
      : undefined;
    return found ? setPageHeaders(reply).send(tokenActionPage(purpose, found)) : invalid(reply);
  };

  app.get(`${CONFIRM_PATH}:token`, show('confirm'));
  app.get(`${UNSUBSCRIBE_PATH}:token`, show('unsubscribe'));

  app.post(`${CONFIRM_PATH}:token`, async (request: TokenRequest, reply) => {
    const { token } = request.params;
    const confirmed = isWellFormedLinkToken(token) ? await subscriptions.confirm(token, new Date()) : undefined;
    return confirmed ? setPageHeaders(reply).send(tokenDonePage('confirm', confirmed)) : invalid(reply);
  });

  app.post(`${UNSUBSCRIBE_PATH}:token`, async (request: TokenRequest, reply) => {
    const { token } = request.params;
    const removed = isWellFormedLinkToken(token) ? await subscriptions.unsubscribe(token) : undefined;
    return removed ? setPageHeaders(reply).send(tokenDonePage('unsubscribe', removed)) : invalid(reply);
  });
}
