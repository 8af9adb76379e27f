/** `outpost account create --name N`: one JSON line with the new account id and its API key (shown once). */
import { ConfigError, EXIT } from '../shared/errors.ts';
import type { Env } from '../shared/env.ts';
import { createAccount } from '../service/accounts.ts';
import { loadServiceConfig } from '../service/config.ts';
import { openStore } from '../service/store/open.ts';

export async function runAccountCreate(env: Env, name: string): Promise<number> {
  if (name.length > 255) throw new ConfigError('--name', '--name is longer than 255 characters; use a shorter name');
  const config = loadServiceConfig(env);
  // The database the service uses (DATABASE_URL or DATA_DIR). PostgreSQL checks the secrets key at
  // open, so it gets the key as the service loads it; SQLite loads it on the first secret, as before.
  const postgres = config.database?.kind === 'postgres';
  const store = await openStore({
    dataDir: config.dataDir,
    ...(config.database ? { database: config.database } : {}),
    ...(postgres && config.secrets ? { secrets: config.secrets } : {}),
  });
  try {
    const created = await createAccount(store, name);
    process.stdout.write(`${JSON.stringify({ accountId: created.accountId, apiKey: created.apiKey })}\n`);
    return EXIT.ok;
  } finally {
    await store.close();
  }
}
