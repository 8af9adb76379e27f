/** The dashboard whose customDomain is `host`, rendered at `/` of that host; undefined when none is. */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { WebDeps } from '../deps.ts';
import { dashboardAtHost } from './locate.ts';
import { sendDashboardPage } from './serve.ts';

export async function dashboardAtDomain(
  deps: WebDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  host: string,
): Promise<FastifyReply | undefined> {
  const located = await dashboardAtHost(deps.store, host);
  return located ? sendDashboardPage(deps, request, reply, located) : undefined;
}
