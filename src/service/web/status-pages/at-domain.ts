/** The status page whose customDomain is `host`, rendered at `/` of that host; undefined when none is. */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { WebDeps } from '../deps.ts';

export async function statusPageAtDomain(_deps: WebDeps, _request: FastifyRequest, _reply: FastifyReply, _host: string): Promise<FastifyReply | undefined> {
  return undefined;
}
