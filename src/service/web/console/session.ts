/**
 * Console sessions: a random token in an HttpOnly, SameSite=Strict cookie scoped to /app (Secure when
 * PUBLIC_URL is https), looked up by its hash in the store. The guard that every console page but
 * the sign-in page runs sets `request.consoleAccountId` and `request.consoleCsrfToken`.
 */
import { randomBytes } from 'node:crypto';
import type { CookieSerializeOptions } from '@fastify/cookie';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ServiceConfig } from '../../config.ts';
import type { Store } from '../../store/store.ts';

export const SESSION_COOKIE = 'outpost_console';
/** A session nobody used for this long ends (polls of the live updates do not count as use). */
export const SESSION_IDLE_MS = 30 * 60_000;
/** A session ends this long after sign-in, however busy. */
export const SESSION_MAX_MS = 12 * 60 * 60_000;

declare module 'fastify' {
  interface FastifyContextConfig {
    /** false: a request of this route does not count as activity (a live-update poll). */
    consoleActivity?: boolean;
  }
}

/** The options of every cookie the console sets: its session and its CSRF secret. */
export function consoleCookieOptions(config: Pick<ServiceConfig, 'publicUrl'>): CookieSerializeOptions {
  return { path: '/app', httpOnly: true, sameSite: 'strict', secure: config.publicUrl.protocol === 'https:' };
}

/** Starts a session of `accountId` and sets its cookie; expired sessions of anyone are removed on the way. */
export async function startSession(
  store: Store,
  config: Pick<ServiceConfig, 'publicUrl'>,
  reply: FastifyReply,
  accountId: string,
): Promise<void> {
  const now = Date.now();
  await store.consoleSessions.deleteExpired(new Date(now).toISOString(), new Date(now - SESSION_IDLE_MS).toISOString());
  const token = randomBytes(32).toString('base64url');
  const createdAt = new Date(now).toISOString();
  await store.consoleSessions.create(token, {
    accountId,
    createdAt,
    lastSeenAt: createdAt,
    expiresAt: new Date(now + SESSION_MAX_MS).toISOString(),
  });
  reply.setCookie(SESSION_COOKIE, token, { ...consoleCookieOptions(config), maxAge: SESSION_MAX_MS / 1000 });
}

/** Ends the request's session, if it has one, and clears its cookie. */
export async function endSession(
  store: Store,
  config: Pick<ServiceConfig, 'publicUrl'>,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<void> {
  const token = request.cookies[SESSION_COOKIE];
  if (token) await store.consoleSessions.delete(token);
  reply.clearCookie(SESSION_COOKIE, consoleCookieOptions(config));
}

/** The account of the request's live session, recording the activity unless the route says otherwise. */
export async function sessionAccount(store: Store, request: FastifyRequest): Promise<string | undefined> {
  const token = request.cookies[SESSION_COOKIE];
  if (!token) return undefined;
  const now = Date.now();
  const session = await store.consoleSessions.findActive(
    token,
    new Date(now).toISOString(),
    new Date(now - SESSION_IDLE_MS).toISOString(),
  );
  if (!session) return undefined;
  if (request.routeOptions.config.consoleActivity !== false)
    await store.consoleSessions.touch(token, new Date(now).toISOString());
  return session.accountId;
}

/**
 * The onRequest hook of the guarded console: a request without a live session is sent to the
 * sign-in page (a page) or refused with 401 (a live-update poll, which cannot follow a redirect
 * usefully).
 */
export function sessionGuard(store: Store) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> => {
    const accountId = await sessionAccount(store, request);
    if (!accountId) {
      if (request.routeOptions.config.consoleActivity === false)
        return reply.status(401).type('text/plain').send('Signed out');
      return reply.redirect('/app/sign-in', 303);
    }
    request.consoleAccountId = accountId;
    request.consoleCsrfToken = reply.generateCsrf();
    return undefined;
  };
}
