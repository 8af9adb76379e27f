/** The status page whose customDomain is `host`, rendered at `/` of that host; undefined when none is. */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { WebDeps } from '../deps.ts';
import { sendNotFoundPage } from '../not-found.ts';
import { sendStatusPage } from './page.ts';
import { lookUpStatusPage } from './resolve.ts';

export async function statusPageAtDomain(
  deps: WebDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  host: string,
): Promise<FastifyReply | undefined> {
  if (host === '') return undefined;
  const lookup = await lookUpStatusPage(deps, request, reply);
  if (lookup.kind === 'none') return undefined;
  if (lookup.kind === 'sent') return reply;
  if (lookup.kind === 'locked') return sendNotFoundPage(reply);
  return sendStatusPage(deps, reply, lookup.found);
}
