/**
 * Authentication of the public API: `Authorization: Bearer <op_ key>` plus
 * `x-service-account: <accountId>` (or the reference's `x-checkly-account`), as the spec requires both. The key must belong to the named
 * account; every failure is the same 401 so a caller cannot probe which account ids exist.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Account, Store } from '../store/store.ts';
import { BadRequestError, UnauthorizedError } from './errors.ts';

export const ACCOUNT_HEADER = 'x-service-account';
/** The reference's name for the same header, sent by tools written for it (its CLI, Terraform, Pulumi). */
export const REFERENCE_ACCOUNT_HEADER = 'x-checkly-account';

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated account. Set by requireAccount; only read it in routes guarded by it. */
    account: Account;
  }
  interface FastifyInstance {
    /** The store requireAccount resolves keys with; decorated by the plugin that uses the hook. */
    store: Store;
  }
}

/** Reads the raw bearer token, or undefined when the header is absent or not a Bearer one. */
export function bearerToken(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  return match?.[1];
}

/**
 * A Fastify hook: use it as `onRequest` so unauthenticated requests are refused before their body
 * is parsed or validated (it also works as a `preHandler`). It resolves keys with `fastify.store`,
 * which must be decorated in the plugin it runs in; `useAccountAuth` does both in one call.
 */
export async function requireAccount(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
  const store = request.server.store as Store | undefined;
  if (!store) {
    // A wiring bug, not a client error: it becomes a logged 500.
    throw new Error('requireAccount needs fastify.store: call useAccountAuth(app, store) in the plugin');
  }
  const token = bearerToken(request);
  if (!token) {
    throw new UnauthorizedError('Missing API key: send the header "Authorization: Bearer <your op_ API key>"');
  }
  const accountId = accountHeader(request);
  if (typeof accountId !== 'string' || accountId.trim() === '') {
    throw new UnauthorizedError(`Missing account: send the header "${ACCOUNT_HEADER}: <your account id>"`);
  }
  const account = await accountForApiKey(store, accountId, token);
  if (!account) {
    throw new UnauthorizedError(`The API key is not valid for the account in "${ACCOUNT_HEADER}"`);
  }
  request.account = account;
}

/**
 * The account id the request names, in either header. Both given and different is a 400 naming both:
 * guessing which one the caller meant could act on the wrong account.
 */
function accountHeader(request: FastifyRequest): string | string[] | undefined {
  const own = request.headers[ACCOUNT_HEADER];
  const reference = request.headers[REFERENCE_ACCOUNT_HEADER];
  if (own === undefined) return reference;
  if (reference !== undefined && String(reference).trim() !== String(own).trim()) {
    throw new BadRequestError(
      `The headers "${ACCOUNT_HEADER}" and "${REFERENCE_ACCOUNT_HEADER}" name different accounts: send one, or the same id in both`,
    );
  }
  return own;
}

/**
 * The account when `rawKey` is one of its live API keys; undefined for an unknown or revoked key and
 * for a key of another account alike. The API and the console's sign-in both verify keys here.
 */
export async function accountForApiKey(store: Store, accountId: string, rawKey: string): Promise<Account | undefined> {
  const account = await store.accounts.findAccountByApiKey(rawKey);
  return account && account.id === accountId.trim() ? account : undefined;
}

/**
 * Guards every route of the calling plugin with requireAccount. Plugins are encapsulated, so the
 * hook and the `store` decoration stay inside it (the agent API keeps its own location-key auth).
 */
export function useAccountAuth(app: FastifyInstance, store: Store): void {
  if (!app.hasDecorator('store')) app.decorate('store', store);
  app.decorateRequest('account', null as unknown as Account);
  app.addHook('onRequest', requireAccount);
}
