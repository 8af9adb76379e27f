/**
 * GET /v1/badges/checks/{checkId} and /v1/badges/groups/{groupId}: a check's or group's status as an
 * SVG badge (the reference's Badges). No API key: badges are embedded in READMEs. An account serves
 * them only once it turns them on (PUT /v1/account/settings, badgesEnabled); until then, and for an
 * unknown id, the answer is the same 404, so a badge URL tells nothing about what exists.
 *
 * Answers are cacheable for a minute with an ETag (304 on If-None-Match), and carry a
 * Content-Security-Policy that lets the SVG, opened on its own, run and load nothing.
 */
import { createHash } from 'node:crypto';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { type Static, Type } from 'typebox';
import { BADGE_THEMES } from '../badges/palette.ts';
import { badgeResponseTime, badgeStatus } from '../badges/status.ts';
import { BADGE_STYLES, renderBadge } from '../badges/svg.ts';
import { NotFoundError } from '../http/errors.ts';
import type { BadgeSubject } from '../store/account-settings-types.ts';
import type { Store } from '../store/store.ts';
import { ApiErrorSchema, IntegerId } from './schemas.ts';

/** How long a badge may be cached (s): a README shows a status at most this much older than the store's. */
export const BADGE_MAX_AGE_SECONDS = 60;
const NOT_FOUND = 'No badge here: the id is unknown or its account has not enabled badges';

const BadgeQuery = Type.Object({
  style: Type.Enum([...BADGE_STYLES], { default: 'flat' }),
  theme: Type.Enum([...BADGE_THEMES], { default: 'default' }),
  responseTime: Type.Boolean({ default: false, description: 'Add the latest response time (ms) to the status.' }),
});
type BadgeOptions = Static<typeof BadgeQuery>;

const badgeResponses = {
  200: {
    description: 'The badge',
    content: { 'image/svg+xml': { schema: Type.String({ description: 'An SVG image of the status.' }) } },
  },
  400: ApiErrorSchema,
  404: ApiErrorSchema,
};

/** The badge's message: the status, and with responseTime the latest response time. */
export function badgeMessage(subject: BadgeSubject, responseTime: boolean): string {
  const status = badgeStatus(subject.checks);
  if (!responseTime) return status;
  const ms = badgeResponseTime(subject.checks);
  return `${status} · ${ms === null ? 'n/a' : `${ms} ms`}`;
}

/** Whether If-None-Match names this ETag (a list, weak or strong, or `*`). */
function matchesEtag(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  return ifNoneMatch.split(',').some((tag) => {
    const t = tag.trim();
    return t === '*' || t.replace(/^W\//, '') === etag;
  });
}

function sendBadge(
  request: FastifyRequest,
  reply: FastifyReply,
  subject: BadgeSubject | undefined,
  options: BadgeOptions,
) {
  if (!subject) throw new NotFoundError(NOT_FOUND);
  const svg = renderBadge(
    { label: subject.name, message: badgeMessage(subject, options.responseTime), status: badgeStatus(subject.checks) },
    options.style,
    options.theme,
  );
  const etag = `"${createHash('sha256').update(svg).digest('base64url').slice(0, 27)}"`;
  reply
    .header('cache-control', `public, max-age=${BADGE_MAX_AGE_SECONDS}`)
    .header('etag', etag)
    .header('x-content-type-options', 'nosniff')
    .header('content-security-policy', "default-src 'none'; sandbox");
  if (matchesEtag(request.headers['if-none-match'], etag)) return reply.status(304).send();
  return reply.type('image/svg+xml; charset=utf-8').send(svg);
}

export const badgeRoutes: FastifyPluginAsync<{ store: Store }> = async (fastify, { store }) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  // Badges carry no credentials: `security: []` says so in /openapi.json.
  const common = { tags: ['Badges'], security: [], querystring: BadgeQuery, response: badgeResponses };

  app.get(
    '/v1/badges/checks/:checkId',
    { schema: { ...common, params: Type.Object({ checkId: Type.String({ format: 'uuid' }) }) } },
    async (request, reply) =>
      sendBadge(request, reply, await store.badges.check(request.params.checkId), request.query),
  );

  app.get(
    '/v1/badges/groups/:groupId',
    { schema: { ...common, params: Type.Object({ groupId: IntegerId() }) } },
    async (request, reply) =>
      sendBadge(request, reply, await store.badges.group(request.params.groupId), request.query),
  );
};
