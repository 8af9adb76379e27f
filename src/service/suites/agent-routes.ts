/**
 * `GET /agent/v1/suite-bundles/{sha256}`: an agent downloads the archive of a Playwright check
 * suite it was leased (authenticated with the location key, like the rest of the agent API). Only
 * archives of the location's own account are served; anything else is 404, whether or not it
 * exists elsewhere.
 */
import type { FastifyPluginAsync } from 'fastify';
import { AGENT_API_PREFIX } from '../../shared/protocol.ts';
import { NotFoundError, UnauthorizedError } from '../http/errors.ts';
import type { Store } from '../store/store.ts';
import type { SuiteBundleStore } from './bundle-store.ts';

const KEY_REJECTED =
  'The private location key was not accepted: it is unknown or was deleted. Set API_KEY to a current key of the location (pl_...)';

export const suiteBundleAgentRoutes: FastifyPluginAsync<{ store: Store; bundles: SuiteBundleStore }> = async (
  app,
  { store, bundles },
) => {
  app.get<{ Params: { sha256: string } }>(`${AGENT_API_PREFIX}/suite-bundles/:sha256`, async (request, reply) => {
    const match = request.headers.authorization ? /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization) : null;
    if (!match?.[1])
      throw new UnauthorizedError(`Missing private location key: send "Authorization: Bearer pl_...". ${KEY_REJECTED}`);
    const location = await store.locations.findByKey(match[1]);
    if (!location) throw new UnauthorizedError(KEY_REJECTED);
    const found = await bundles.get(location.accountId, request.params.sha256);
    if (!found) throw new NotFoundError('Suite archive not found');
    return reply
      .header('content-type', found.format === 'zip' ? 'application/zip' : 'application/gzip')
      .header('content-length', String(found.bytes.length))
      .send(found.bytes);
  });
};
