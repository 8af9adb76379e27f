import type { FastifyBaseLogger } from 'fastify';

/** What coordination logs through: the service's logger, or any with these levels. */
export type CoordinationLog = Pick<FastifyBaseLogger, 'info' | 'warn' | 'error'>;
