/**
 * The PostgreSQL test support: fresh databases on the throwaway cluster, and the CI rule (PostgreSQL
 * tests fail under CI without OUTPOST_TEST_DATABASE_URL; elsewhere they are skipped, saying why).
 */
import pg from 'pg';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createTestDatabase, postgresAvailable, TEST_DATABASE_URL_VAR } from './postgres.ts';

describe('the CI rule', () => {
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  it('under CI, a missing OUTPOST_TEST_DATABASE_URL fails instead of skipping', () => {
    vi.stubEnv('CI', 'true');
    vi.stubEnv(TEST_DATABASE_URL_VAR, '');
    expect(() => postgresAvailable()).toThrow(
      'OUTPOST_TEST_DATABASE_URL is not set: under CI the PostgreSQL tests must run',
    );
  });

  it('elsewhere, a missing OUTPOST_TEST_DATABASE_URL skips, saying how to start the cluster', () => {
    vi.stubEnv('CI', '');
    vi.stubEnv(TEST_DATABASE_URL_VAR, '');
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    expect(postgresAvailable()).toBe(false);
    expect(warn.mock.calls.flat().join('')).toContain('scripts/postgres-test-cluster.sh start');
    warn.mockRestore();
  });
});

describe.skipIf(!postgresAvailable())('test databases', () => {
  it('creates a fresh database of its own and drops it, even with a session still connected', async () => {
    const first = await createTestDatabase();
    const second = await createTestDatabase();
    expect(first.url).not.toBe(second.url);
    const client = new pg.Client({ connectionString: first.url });
    // The drop ends this session; its error must not fail the test.
    client.on('error', () => {});
    await client.connect();
    await client.query('CREATE TABLE t (id int)');
    const { rows } = await client.query<{ name: string }>('SELECT current_database() AS name');
    expect(first.url.endsWith(`/${rows[0]!.name}`)).toBe(true);
    await first.drop();
    await second.drop();
    const admin = new pg.Client({ connectionString: process.env[TEST_DATABASE_URL_VAR] });
    await admin.connect();
    const left = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [rows[0]!.name]);
    await admin.end();
    expect(left.rowCount).toBe(0);
  });
});
