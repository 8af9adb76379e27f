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
import { MIGRATIONS, runMigrations } from '../../src/service/store/migrations/index.ts';
import { SqliteDatabase } from '../../src/service/store/sql/sqlite-database.ts';
import { openDatabase } from '../../src/service/store/sqlite/db.ts';
import { verifySecretsMarker } from '../../src/service/store/repos/variables.ts';
import { ConfigError } from '../../src/shared/errors.ts';
import { tempDataDir } from '../helpers/public-api.ts';
import { httpApiAccount } from '../support/web-api-account.ts';

const dirs: string[] = [];
const services: Service[] = [];
afterEach(async () => {
  for (const s of services.splice(0)) await s.stop();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function start(env: Record<string, string>, dataDir = tempDataDir()) {
  dirs.push(dataDir);
  const service = await buildService(loadServiceConfig({ DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', ...env }), {
    logger: false,
  });
  services.push(service);
  const base = await service.start();
  return { service, base, dataDir };
}

/** A started service with the account Acme, whose public API it calls over HTTP. */
async function startWithAccount() {
  const started = await start({});
  return { ...started, acme: await httpApiAccount(started.service.store, started.base) };
}

/** The account Acme with one secret variable K of `value`, stored straight through the store; resolves to its id. */
async function accountWithSecretVariable(service: Service, value: string): Promise<string> {
  const { accountId } = await createAccount(service.store, 'Acme');
  await service.store.variables.create(accountId, { key: 'K', value, locked: false, secret: true });
  return accountId;
}

/** A secret as it might sit in the bytes: as given, and its base64 and base64url (unpadded). */
function formsOf(secret: string): string[] {
  const bytes = Buffer.from(secret, 'utf8');
  return [secret, bytes.toString('base64').replace(/=+$/, ''), bytes.toString('base64url')];
}

/** Fails naming each secret (and the form of it) that the database's files hold. */
function expectNoneStored(dataDir: string, secrets: Record<string, string>): void {
  const raw = databaseBytes(dataDir);
  const found = Object.entries(secrets).flatMap(([where, secret]) =>
    formsOf(secret)
      .filter((form) => raw.includes(form))
      .map((form) => `${where}: ${form}`),
  );
  expect(found).toEqual([]);
}

/** Every byte the database keeps: the main file, the WAL and the shared-memory index. */
function databaseBytes(dataDir: string): string {
  return readdirSync(dataDir)
    .filter((f) => f.startsWith('outpost.db'))
    .map((f) => readFileSync(path.join(dataDir, f)).toString('latin1'))
    .join('\n');
}

/**
 * A database as versions before migration 009 left it: webhook secrets in plain text in a
 * subscription and a delivery, and, given `markerKey`, the marker of the key that sealed its secrets.
 */
async function databaseBeforeSealing(
  dataDir: string,
  plain: { subscription: string; outbox: string },
  markerKey?: Buffer,
): Promise<void> {
  const db = openDatabase(dataDir);
  await runMigrations(
    new SqliteDatabase(db),
    MIGRATIONS.filter((m) => m.version <= 8),
  );
  if (markerKey) verifySecretsMarker(db, new SecretBox(markerKey), { setting: 'SECRETS_KEY', description: 'the test' });
  const now = new Date().toISOString();
  db.prepare('INSERT INTO accounts (id, name, created_at) VALUES (?, ?, ?)').run('acc-1', 'Acme', now);
  db.prepare(
    'INSERT INTO status_pages (id, account_id, name, url, default_theme, created_at) VALUES (?, ?, ?, ?, ?, ?)',
  ).run('page-1', 'acc-1', 'Acme', 'acme', 'AUTO', now);
  db.prepare(
    `INSERT INTO sp_subscriptions (id, status_page_id, type, address, address_key, secret, status, created_at, updated_at)
     VALUES ('sub-1', 'page-1', 'WEBHOOK', 'http://hooks.example/', 'http://hooks.example/', ?, 'VERIFIED', ?, ?)`,
  ).run(plain.subscription, now, now);
  db.prepare(
    `INSERT INTO notification_outbox (id, account_id, incident_update_id, subscription_id, channel, address, address_key,
       secret, payload, state, attempts, next_attempt_at, created_at)
     VALUES ('out-1', 'acc-1', 'upd-1', NULL, 'WEBHOOK', 'http://hooks.example/', 'http://hooks.example/', ?, '{}', 'failed', 1, ?, ?)`,
  ).run(plain.outbox, now, now);
  db.close();
}

/** The webhook secret columns as stored: the subscription's, then the delivery's. */
function storedWebhookSecrets(dataDir: string, column = 'sealed_secret'): string[] {
  const db = new DatabaseSync(path.join(dataDir, 'outpost.db'), { readOnly: true });
  try {
    return ['sp_subscriptions', 'notification_outbox'].map((table) => {
      const row = db.prepare(`SELECT ${column} AS s FROM ${table}`).get() as { s: string };
      return row.s;
    });
  } finally {
    db.close();
  }
}

describe('SecretBox', () => {
  it('round-trips, uses a fresh IV per value and refuses altered or foreign values', () => {
    const box = new SecretBox(randomBytes(32));
    const a = box.seal('pässwörd-1');
    expect(a).toMatch(/^enc:v1:[0-9a-f]{8}:/);
    expect(box.seal('pässwörd-1')).not.toBe(a);
    expect(box.open(a)).toBe('pässwörd-1');
    // One character of the ciphertext changed (to one that differs from it, whatever it was).
    const tampered = `${a.slice(0, -2)}${a.at(-2) === 'A' ? 'B' : 'A'}${a.slice(-1)}`;
    expect(tampered).not.toBe(a);
    expect(() => box.open(tampered)).toThrow(SecretDecryptError);
    expect(() => new SecretBox(randomBytes(32)).open(a)).toThrow(/sealed with key/);
  });
});

describe('secrets at rest', () => {
  it('keeps secret values of variables, checks, groups and run snapshots out of the database file', async () => {
    const { service, dataDir, acme } = await startWithAccount();
    const { accountId, post } = acme;
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
    const group = await post('/v2/check-groups', {
      name: 'g',
      environmentVariables: [{ key: 'GRP', value: canaries.group, secret: true }],
    });
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

    // Webhook signing secrets: in the subscriptions and, copied, in the outbox of an incident update.
    const hookSecrets = { subscription: 'CANARY-whsec-4c1e8b77d2', other: 'CANARY-whsec-9a0f3e55c6' };
    const service1 = await post('/v1/status-pages/services', { name: 'API' }, 200);
    const page = await post('/v1/status-pages', {
      name: 'Acme',
      url: 'acme',
      cards: [{ name: 'Core', services: [{ id: service1.id }] }],
    });
    await post(`/v1/status-pages/${page.id}/subscriptions/bulk`, {
      subscriptions: Object.values(hookSecrets).map((secret, i) => ({
        type: 'WEBHOOK',
        config: JSON.stringify({ url: `http://127.0.0.1:9/${i}`, secret }),
      })),
      autoVerify: true,
    });
    const incident = await post('/v1/status-pages/incidents', {
      name: 'Down',
      severity: 'MAJOR',
      services: [{ id: service1.id, name: 'API', accountId }],
      incidentUpdates: [{ description: 'Looking', status: 'INVESTIGATING', notifySubscribers: true }],
    });
    const updateId = (incident.incidentUpdates as Array<{ id: string }>)[0]?.id ?? '';
    const queued = await service.store.outbox.listForUpdate(updateId);
    expect(queued.map((e) => e.secret).sort()).toEqual(Object.values(hookSecrets).sort());

    // Both files are read: what was written since the last checkpoint is only in the WAL.
    expect(statSync(path.join(dataDir, 'outpost.db-wal')).size).toBeGreaterThan(0);
    expectNoneStored(dataDir, { ...canaries, ...hookSecrets });
    const raw = databaseBytes(dataDir);
    expect(raw).toContain('enc:v1:');
    const db = new DatabaseSync(path.join(dataDir, 'outpost.db'), { readOnly: true });
    const values = db.prepare('SELECT sealed_value FROM environment_variables').all() as Array<{
      sealed_value: string;
    }>;
    db.close();
    expect(values.map((v) => v.sealed_value)).toEqual([
      expect.stringMatching(/^enc:v1:/),
      expect.stringMatching(/^enc:v1:/),
    ]);

    // The job an agent gets carries them in plain text (the agent needs them, and scrubs them).
    const job = toJob((await service.store.runs.get(run.runId)) ?? run, service.store.secrets, Date.now());
    expect(job.check.environmentVariables).toEqual(
      expect.arrayContaining([
        { key: 'ACC', value: canaries.account, secret: true },
        { key: 'GRP', value: canaries.group, secret: true },
        { key: 'CHK', value: canaries.check, secret: true },
      ]),
    );
  });

  it('keeps the secrets of alert channel configs out of the database file', async () => {
    const { service, base, dataDir, acme } = await startWithAccount();
    const canaries = {
      slackUrl: 'https://hooks.slack.test/services/T0/B0/CANARY-slack-6e2d90',
      webhookSecret: 'CANARY-hooksecret-1f7b3c',
      pagerDuty: 'CANARY-pdkey-8a4e62',
      opsgenie: 'CANARY-ogkey-3b9d17',
      webhookHeader: 'Bearer CANARY-hookheader-52c8e1',
      webhookQuery: 'CANARY-hookquery-0d4a77',
    };
    const configs = [
      { type: 'SLACK', config: { url: canaries.slackUrl } },
      {
        type: 'WEBHOOK',
        config: {
          url: 'http://127.0.0.1:9/',
          webhookSecret: canaries.webhookSecret,
          headers: [{ key: 'Authorization', value: canaries.webhookHeader }],
          queryParameters: [{ key: 'token', value: canaries.webhookQuery }],
        },
      },
      { type: 'PAGERDUTY', config: { serviceKey: canaries.pagerDuty, account: 'acme', serviceName: 'web' } },
      { type: 'OPSGENIE', config: { apiKey: canaries.opsgenie, region: 'EU', priority: 'P2' } },
    ];
    for (const body of configs) {
      const res = await fetch(`${base}/v1/alert-channels`, {
        method: 'POST',
        headers: acme.headers,
        body: JSON.stringify(body),
      });
      const text = await res.text();
      expect(res.status, text).toBe(201);
      for (const secret of Object.values(canaries)) expect(text).not.toContain(secret);
    }
    expect(statSync(path.join(dataDir, 'outpost.db-wal')).size).toBeGreaterThan(0);
    expectNoneStored(dataDir, canaries);
    // The store opens them again for whoever delivers alerts.
    const stored = await service.store.alertChannels.list(acme.accountId, { limit: 10, page: 1 });
    expect(stored.map((c) => c.definition.config)).toMatchObject([
      { url: canaries.slackUrl },
      {
        webhookSecret: canaries.webhookSecret,
        headers: [{ key: 'Authorization', value: canaries.webhookHeader }],
        queryParameters: [{ key: 'token', value: canaries.webhookQuery }],
      },
      { serviceKey: canaries.pagerDuty },
      { apiKey: canaries.opsgenie },
    ]);
  });

  it('seals the webhook secrets an older database kept in plain text, on the first start with the key', async () => {
    const dataDir = tempDataDir();
    const plain = { subscription: 'CANARY-old-sub-5e2d9a41', outbox: 'CANARY-old-outbox-7b3c0f92' };
    await databaseBeforeSealing(dataDir, plain);
    expect(databaseBytes(dataDir)).toContain(plain.subscription);

    const { service } = await start({}, dataDir);
    expect((await service.store.outbox.get('out-1'))?.secret).toBe(plain.outbox);
    expect(storedWebhookSecrets(dataDir)).toEqual([
      expect.stringMatching(/^enc:v1:/),
      expect.stringMatching(/^enc:v1:/),
    ]);
    expectNoneStored(dataDir, plain);
  });

  it('leaves an older database as it was when the key cannot open its secrets', async () => {
    const dataDir = tempDataDir();
    dirs.push(dataDir);
    const plain = { subscription: 'CANARY-old-sub-2f6a0c19', outbox: 'CANARY-old-outbox-8d1b7e30' };
    await databaseBeforeSealing(dataDir, plain, randomBytes(32));

    await expect(start({ SECRETS_KEY: randomBytes(32).toString('base64') }, dataDir)).rejects.toThrow(ConfigError);
    dirs.pop();
    // The migration rolled back whole: still version 8, the old column, the plain values.
    expect(storedWebhookSecrets(dataDir, 'secret')).toEqual([plain.subscription, plain.outbox]);
    const db = new DatabaseSync(path.join(dataDir, 'outpost.db'), { readOnly: true });
    expect(db.prepare('SELECT MAX(version) AS v FROM schema_migrations').get()).toEqual({ v: 8 });
    db.close();
  });

  it('generates the key file on first start (mode 0600, beside the database, not in it) and reuses it', async () => {
    const { service, dataDir } = await start({});
    const keyFile = path.join(dataDir, DEFAULT_KEY_FILE_NAME);
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    const key = readFileSync(keyFile, 'utf8').trim();
    expect(Buffer.from(key, 'base64')).toHaveLength(32);
    const accountId = await accountWithSecretVariable(service, 'v-after-restart');
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
    const accountId = await accountWithSecretVariable(service, 'sealed-with-first-key');
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
    expect(() => loadSecretsKeyConfig({ SECRETS_KEY: 'too-short' }, '/tmp/x')).toThrow(
      /SECRETS_KEY must be the base64 of 32 bytes/,
    );
    expect(() => loadSecretsKeyConfig({ SECRETS_KEY: randomBytes(16).toString('base64') }, '/tmp/x')).toThrow(
      ConfigError,
    );
    expect(loadSecretsKeyConfig({}, '/data')).toEqual({ keyFile: '/data/outpost-secrets.key' });
    expect(loadSecretsKeyConfig({ SECRETS_KEY_FILE: '/run/secrets/k' }, '/data')).toEqual({
      keyFile: '/run/secrets/k',
    });
  });

  it('an empty key file is a ConfigError, not a silently generated new key', async () => {
    const dataDir = tempDataDir();
    dirs.push(dataDir);
    writeFileSync(path.join(dataDir, DEFAULT_KEY_FILE_NAME), '');
    await expect(start({}, dataDir)).rejects.toThrow(/SECRETS_KEY_FILE=.*is empty/);
  });
});
