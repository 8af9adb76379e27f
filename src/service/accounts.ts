import { ConfigError } from '../shared/errors.ts';
import type { Store } from './store/store.ts';

export const ACCOUNT_NAME_MAX = 255;

/**
 * Creates an account and its first API key; the only way to get an account (there is no sign-up
 * endpoint). Used by `outpost account create --name N`, so a bad name is a ConfigError naming the
 * flag: the CLI prints it as one line and exits 2.
 */
export async function createAccount(store: Store, name: string): Promise<{ accountId: string; apiKey: string }> {
  const trimmed = name.trim();
  if (trimmed.length < 1 || trimmed.length > ACCOUNT_NAME_MAX) {
    throw new ConfigError('--name', `--name must be 1 to ${ACCOUNT_NAME_MAX} characters (got ${trimmed.length})`);
  }
  const { account, apiKey } = await store.accounts.create(trimmed);
  return { accountId: account.id, apiKey };
}
