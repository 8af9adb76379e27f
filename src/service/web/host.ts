/**
 * The host a request was addressed to, normalized as custom domains are stored (lower case, no port, no
 * trailing dot), for serving a status page or dashboard at `/` of its own domain.
 */
import type { FastifyRequest } from 'fastify';

export function requestHost(request: FastifyRequest): string {
  const raw = request.headers.host ?? '';
  const withoutPort = raw.startsWith('[') ? raw.slice(0, raw.indexOf(']') + 1) : (raw.split(':')[0] ?? '');
  return withoutPort.toLowerCase().replace(/\.$/, '');
}
