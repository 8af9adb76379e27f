/** `outpost account create --name N`: one JSON line with the new account id and its API key (shown once). */
import { ConfigError, EXIT } from '../shared/errors.ts';
import type { Env } from '../shared/env.ts';
import { createAccount } from '../service/accounts.ts';
import { loadServiceConfig } from '../service/config.ts';
import { openSqliteStore } from '../service/store/sqlite/index.ts';

export async function runAccountCreate(env: Env, name: string): Promise<number> {
  if (name.length > 255) throw new ConfigError('--name', '--name is longer than 255 characters; use a shorter name');
  const config = loadServiceConfig(env);
  const store = await openSqliteStore(config.dataDir);
  try {
    const created = await createAccount(store, name);
    process.stdout.write(`${JSON.stringify({ accountId: created.accountId, apiKey: created.apiKey })}\n`);
    return EXIT.ok;
  } finally {
    await store.close();
  }
}
