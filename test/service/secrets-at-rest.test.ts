/**
 * Secrets at rest: sealed in every table that holds them, the key kept out of the database, and a
 * service that refuses to start with a key that cannot open what is stored.
 */
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterEach, describe, expect, it } from 'vitest';
import { createAccount } from '../../src/service/accounts.ts';
import { buildService, type Service } from '../../src/service/app.ts';
import { loadServiceConfig } from '../../src/service/config.ts';
import { toJob } from '../../src/service/dispatch/dispatcher.ts';
import { SecretBox, SecretDecryptError } from '../../src/service/secrets/box.ts';
import { DEFAULT_KEY_FILE_NAME, loadSecretsKeyConfig } from '../../src/service/secrets/key.ts';
import { ConfigError } from '../../src/shared/errors.ts';
import { tempDataDir } from '../helpers/public-api.ts';

const dirs: string[] = [];
const services: Service[] = [];
afterEach(async () => {
  for (const s of services.splice(0)) await s.stop();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function start(env: Record<string, string>, dataDir = tempDataDir()) {
  dirs.push(dataDir);
  const service = await buildService(loadServiceConfig({ DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', ...env }), { logger: false });
  services.push(service);
  const base = await service.start();
  return { service, base, dataDir };
}

/** Every byte the database keeps: the main file, the WAL and the shared-memory index. */
function databaseBytes(dataDir: string): string {
  return readdirSync(dataDir)
    .filter((f) => f.startsWith('outpost.db'))
    .map((f) => readFileSync(path.join(dataDir, f)).toString('latin1'))
    .join('\n');
}

describe('SecretBox', () => {
  it('round-trips, uses a fresh IV per value and refuses altered or foreign values', () => {
    const box = new SecretBox(randomBytes(32));
    const a = box.seal('pässwörd-1');
    expect(a).toMatch(/^enc:v1:[0-9a-f]{8}:/);
    expect(box.seal('pässwörd-1')).not.toBe(a);
    expect(box.open(a)).toBe('pässwörd-1');
    const tampered = `${a.slice(0, -2)}${a.endsWith('A') ? 'B' : 'A'}${a.slice(-1)}`;
    expect(() => box.open(tampered)).toThrow(SecretDecryptError);
    expect(() => new SecretBox(randomBytes(32)).open(a)).toThrow(/sealed with key/);
  });
});

describe('secrets at rest', () => {
  it('keeps secret values of variables, checks, groups and run snapshots out of the database file', async () => {
    const { service, base, dataDir } = await start({});
    const { accountId, apiKey } = await createAccount(service.store, 'Acme');
    const headers = { authorization: `Bearer ${apiKey}`, 'x-service-account': accountId, 'content-type': 'application/json' };
    const post = async (url: string, body: object) => {
      const res = await fetch(`${base}${url}`, { method: 'POST', headers, body: JSON.stringify(body) });
      expect(res.status, await res.clone().text()).toBe(201);
      return (await res.json()) as Record<string, unknown>;
    };
    const canaries = {
      account: 'CANARY-account-7f3a9c',
      group: 'CANARY-group-5d8e21',
      check: 'CANARY-check-93ab4f',
    };
    await post('/v1/private-locations', { name: 'Office', slugName: 'office' });
    await post('/v1/variables', { key: 'ACC', value: canaries.account, secret: true });
    // The variables table seals every value, not only secret ones (a job snapshot keeps non-secret
    // values plain, as the API returns them anyway).
    await post('/v1/variables', { key: 'ACC_PLAIN', value: 'plain-value-1b2c' });
    const group = await post('/v2/check-groups', { name: 'g', environmentVariables: [{ key: 'GRP', value: canaries.group, secret: true }] });
    const check = await post('/v1/checks/api', {
      name: 'c',
      groupId: group.id,
      privateLocations: ['office'],
      request: { method: 'GET', url: 'http://127.0.0.1:1/' },
      environmentVariables: [{ key: 'CHK', value: canaries.check, secret: true }],
    });
    expect(JSON.stringify(check)).not.toContain(canaries.check);

    const stored = await service.store.checks.get(accountId, check.id as string);
    const location = await service.store.locations.getBySlug(accountId, 'office');
    if (!stored || !location) throw new Error('not stored');
    const run = await service.dispatcher.enqueue(stored, location.id, Date.now());

    // A checkpoint moves the WAL into the main file too; both are read either way.
    const raw = databaseBytes(dataDir);
    for (const [where, value] of Object.entries(canaries)) expect(raw.includes(value), where).toBe(false);
    expect(raw).toContain('enc:v1:');
    const db = new DatabaseSync(path.join(dataDir, 'outpost.db'), { readOnly: true });
    const values = db.prepare('SELECT sealed_value FROM environment_variables').all() as Array<{ sealed_value: string }>;
    db.close();
    expect(values.map((v) => v.sealed_value)).toEqual([expect.stringMatching(/^enc:v1:/), expect.stringMatching(/^enc:v1:/)]);

    // The job an agent gets carries them in plain text (the agent needs them, and scrubs them).
    const job = toJob((await service.store.runs.get(run.runId)) ?? run, service.store.secrets);
    expect(job.check.environmentVariables).toEqual(
      expect.arrayContaining([
        { key: 'ACC', value: canaries.account, secret: true },
        { key: 'GRP', value: canaries.group, secret: true },
        { key: 'CHK', value: canaries.check, secret: true },
      ]),
    );
  });

  it('generates the key file on first start (mode 0600, beside the database, not in it) and reuses it', async () => {
    const { service, dataDir } = await start({});
    const keyFile = path.join(dataDir, DEFAULT_KEY_FILE_NAME);
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    const key = readFileSync(keyFile, 'utf8').trim();
    expect(Buffer.from(key, 'base64')).toHaveLength(32);
    const { accountId } = await createAccount(service.store, 'Acme');
    await service.store.variables.create(accountId, { key: 'K', value: 'v-after-restart', locked: false, secret: true });
    expect(databaseBytes(dataDir)).not.toContain(key);
    await services.pop()?.stop();

    const again = await start({}, dataDir);
    dirs.pop();
    expect(readFileSync(keyFile, 'utf8').trim()).toBe(key);
    expect((await again.service.store.variables.get(accountId, 'K'))?.value).toBe('v-after-restart');
  });

  it('refuses to start with a ConfigError when the key cannot open the stored secrets', async () => {
    const key = randomBytes(32).toString('base64');
    const { service, dataDir } = await start({ SECRETS_KEY: key });
    const { accountId } = await createAccount(service.store, 'Acme');
    await service.store.variables.create(accountId, { key: 'K', value: 'sealed-with-first-key', locked: false, secret: true });
    await services.pop()?.stop();

    const wrong = randomBytes(32).toString('base64');
    const refused = start({ SECRETS_KEY: wrong }, dataDir);
    await expect(refused).rejects.toThrow(ConfigError);
    await expect(refused).rejects.toThrow(/SECRETS_KEY.*cannot decrypt the secrets stored/);
    dirs.pop();

    // A key file with another key likewise, naming the file.
    const keyFile = path.join(dataDir, 'other.key');
    writeFileSync(keyFile, randomBytes(32).toString('base64'), { mode: 0o600 });
    await expect(start({ SECRETS_KEY_FILE: keyFile }, dataDir)).rejects.toThrow(/other\.key/);
    dirs.pop();

    // The right key still works.
    const ok = await start({ SECRETS_KEY: key }, dataDir);
    expect((await ok.service.store.variables.get(accountId, 'K'))?.value).toBe('sealed-with-first-key');
  });

  it('rejects a malformed SECRETS_KEY and an unreadable key file with a ConfigError naming the setting', () => {
    expect(() => loadSecretsKeyConfig({ SECRETS_KEY: 'too-short' }, '/tmp/x')).toThrow(/SECRETS_KEY must be the base64 of 32 bytes/);
    expect(() => loadSecretsKeyConfig({ SECRETS_KEY: randomBytes(16).toString('base64') }, '/tmp/x')).toThrow(ConfigError);
    expect(loadSecretsKeyConfig({}, '/data')).toEqual({ keyFile: '/data/outpost-secrets.key' });
    expect(loadSecretsKeyConfig({ SECRETS_KEY_FILE: '/run/secrets/k' }, '/data')).toEqual({ keyFile: '/run/secrets/k' });
  });

  it('an empty key file is a ConfigError, not a silently generated new key', async () => {
    const dataDir = tempDataDir();
    dirs.push(dataDir);
    writeFileSync(path.join(dataDir, DEFAULT_KEY_FILE_NAME), '');
    await expect(start({}, dataDir)).rejects.toThrow(/SECRETS_KEY_FILE=.*is empty/);
  });
});
