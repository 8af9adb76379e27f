/**
 * What a check body carries to join a group (`groupId`, `groupOrder`) and its own `retryStrategy`
 * (used when its group says FALLBACK, or when it is in no group), shared by every check type's
 * schema, and the validation of `groupId` every check route calls before it stores a check.
 */
import { type TSchema, Type } from 'typebox';
import { BadRequestError } from '../http/errors.ts';
import { BoundedInteger, IntegerId, Nullable } from '../routes/schemas.ts';
import type { StoredCheckGroup } from '../store/check-group-types.ts';
import type { Store } from '../store/store.ts';
import { CheckRetryStrategy } from './retry-strategy-schema.ts';

type Mode = 'create' | 'update';

function prop<T extends TSchema>(mode: Mode, schema: (opts: { default?: unknown }) => T, fallback: unknown) {
  return mode === 'create' ? schema({ default: fallback }) : Type.Optional(schema({}));
}

/** ChecksV1*Create's groupId, groupOrder and retryStrategy (defaults null). */
export function groupMembershipProperties(mode: Mode) {
  return {
    groupId: prop(mode, (o) => Nullable(IntegerId(), o), null),
    groupOrder: prop(mode, (o) => Nullable(BoundedInteger(0), o), null),
    retryStrategy: prop(mode, (o) => Type.Unsafe({ ...CheckRetryStrategy, ...o }), null),
  };
}

/** 400 naming `groupId` unless it is null/absent or one of the account's groups; returns that group. */
export async function validateGroupId(
  store: Pick<Store, 'checkGroups'>,
  accountId: string,
  body: Record<string, unknown>,
): Promise<StoredCheckGroup | undefined> {
  const groupId = body.groupId;
  if (groupId === null || groupId === undefined) return undefined;
  const group = typeof groupId === 'number' ? await store.checkGroups.get(accountId, groupId) : undefined;
  if (!group) throw new BadRequestError(`body/groupId: no check group with id ${String(groupId)} in this account`);
  return group;
}
