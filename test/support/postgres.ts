/**
 * PostgreSQL for tests: fresh databases on the throwaway cluster of scripts/postgres-test-cluster.sh.
 *
 * OUTPOST_TEST_DATABASE_URL is an admin URL on that cluster (CREATE DATABASE allowed). Under CI
 * (CI=true) a test that needs PostgreSQL fails when it is unset, so a broken CI set-up cannot pass by
 * skipping; on a developer's machine such tests are skipped, saying how to start the cluster.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export const TEST_DATABASE_URL_VAR = 'OUTPOST_TEST_DATABASE_URL';

const HOW_TO_START = 'eval "$(scripts/postgres-test-cluster.sh start)"';

function adminUrl(): string | undefined {
  const url = process.env[TEST_DATABASE_URL_VAR];
  return url && url.length > 0 ? url : undefined;
}

/**
 * Whether PostgreSQL tests can run: true when OUTPOST_TEST_DATABASE_URL is set. Unset, it throws under
 * CI (the test file fails) and returns false elsewhere, printing why. Use it as
 * `describe.skipIf(!postgresAvailable())(...)`.
 */
export function postgresAvailable(): boolean {
  if (adminUrl()) return true;
  if (process.env.CI) {
    throw new Error(
      `${TEST_DATABASE_URL_VAR} is not set: under CI the PostgreSQL tests must run (.ci/run starts the cluster)`,
    );
  }
  console.warn(
    `PostgreSQL tests skipped: ${TEST_DATABASE_URL_VAR} is not set; start a throwaway cluster with ${HOW_TO_START}`,
  );
  return false;
}

/** The admin URL; a clear error when it is missing. */
export function testAdminUrl(): string {
  const url = adminUrl();
  if (!url) throw new Error(`${TEST_DATABASE_URL_VAR} is not set; start a throwaway cluster with ${HOW_TO_START}`);
  return url;
}

export interface TestDatabase {
  /** A URL for the new database, same server and credentials as the admin URL. */
  url: string;
  /** Drops the database, ending any session still connected to it. */
  drop(): Promise<void>;
}

async function onAdmin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: testAdminUrl() });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Creates a fresh, uniquely named, empty database for one test file (or test). */
export async function createTestDatabase(): Promise<TestDatabase> {
  // Lower-case hex only: the name needs no quoting and cannot collide across parallel files.
  const name = `outpost_test_${randomBytes(8).toString('hex')}`;
  await onAdmin((client) => client.query(`CREATE DATABASE ${name}`));
  const url = new URL(testAdminUrl());
  url.pathname = `/${name}`;
  let dropped: Promise<void> | undefined;
  return {
    url: url.toString(),
    drop() {
      dropped ??= onAdmin(async (client) => {
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      });
      return dropped;
    },
  };
}
