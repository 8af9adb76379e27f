/**
 * Playwright check suites on the service: create and update with a base64 archive (checked and
 * stored by SHA-256), engine and command validation, the job an agent leases (engine, arguments,
 * global timeout, its wall-clock limit), the archive download for agents (location key, own
 * account only), and triggering a test session. Real composed service on loopback, real SQLite.
 */
import { rmSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildService, type Service } from '../../src/service/app.ts';
import { loadServiceConfig } from '../../src/service/config.ts';
import type { PlaywrightCheckDefinition } from '../../src/shared/checks/types.ts';
import { AGENT_PATHS, type Job, PROTOCOL_VERSION } from '../../src/shared/protocol.ts';
import {
  BOMBS,
  DEFAULT_CAPS,
  deflatedZeros,
  MiB,
  maximalTarGz,
  maximalZip,
  measured,
  REFUSAL_MS,
  RSS_BUDGET,
  refusalAfter,
  SMALLEST_PROJECT,
  zipProject,
} from '../agent/suite-bombs.ts';
import { packSuite } from '../agent/suite-helpers.ts';
import { tempDataDir } from '../helpers/public-api.ts';
import { zipBuffer } from '../helpers/zip.ts';
import { httpApiAccount } from '../support/web-api-account.ts';

let service: Service;
let base: string;
let dataDir: string;

beforeEach(async () => {
  dataDir = tempDataDir();
  service = await buildService(
    loadServiceConfig({
      DATA_DIR: dataDir,
      PORT: '0',
      HOST: '127.0.0.1',
      PLAYWRIGHT_MAX_GLOBAL_TIMEOUT_SECONDS: '7200',
    }),
    { logger: false },
  );
  base = await service.start();
});
afterEach(async () => {
  await service.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

async function account(name = 'Acme') {
  const { accountId, call } = await httpApiAccount(service.store, base, name);
  const loc = await call('POST', '/v1/private-locations', { name: 'Office', slugName: 'office' });
  const { rawKey } = await service.store.locations.createKey(accountId, String(loc.body.id));
  return { accountId, call, locationId: String(loc.body.id), locationKey: rawKey };
}

async function agent(key: string) {
  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${base}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return (await res.json()) as Record<string, unknown>;
  };
  const agentId = crypto.randomUUID();
  await post(AGENT_PATHS.register, {
    agentId,
    version: 'test',
    protocolVersion: PROTOCOL_VERSION,
    hostname: 'h',
    capabilities: { checkTypes: ['PLAYWRIGHT'], runtimes: ['2026.04'] },
    concurrency: { uptime: 1, heavy: 4 },
  });
  return {
    lease: async () =>
      ((await post(AGENT_PATHS.lease, { agentId, slots: { uptime: 0, heavy: 4 }, waitSeconds: 2 })).jobs ??
        []) as Job[],
    bundle: (sha: string, k = key) =>
      fetch(`${base}/agent/v1/suite-bundles/${sha}`, { headers: { authorization: `Bearer ${k}` } }),
  };
}

const spec = { 'tests/a.spec.ts': "import { test } from '@playwright/test'; test('a', () => {});" };

describe('POST /v1/checks/playwright', () => {
  it('stores the archive and returns the reference shape with codeBundlePath and cacheHash', async () => {
    const { call } = await account();
    const archive = await packSuite({ files: spec });
    const res = await call('POST', '/v1/checks/playwright', {
      name: 'Checkout suite',
      privateLocations: ['office'],
      codeBundle: archive.toString('base64'),
      engine: 'node',
      engineVersion: '22',
      testCommand: 'npx playwright test --grep @smoke',
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toMatchObject({
      name: 'Checkout suite',
      checkType: 'PLAYWRIGHT',
      engine: 'node',
      engineVersion: '22',
      testCommand: 'npx playwright test --grep @smoke',
      installCommand: '',
      browsers: ['chromium'],
      globalTimeout: 3600,
      frequency: 10,
      activated: true,
      privateLocations: ['office'],
      codeBundleFormat: 'tar.gz',
      codeBundleSize: archive.length,
    });
    expect(res.body.cacheHash).toMatch(/^[0-9a-f]{64}$/);
    expect(res.body.codeBundlePath).toBe(`suites/${res.body.cacheHash}.tgz`);
    expect(res.body).not.toHaveProperty('codeBundle');
    const got = await call('GET', `/v1/checks/${res.body.id}`);
    expect(got.body).toMatchObject({ checkType: 'PLAYWRIGHT', cacheHash: res.body.cacheHash });
  });

  it('accepts a zip archive whose project sits in one top folder, and the one-word engine', async () => {
    const { call } = await account();
    const zip = await zipBuffer({
      'my-suite/package.json': '{}',
      'my-suite/pnpm-lock.yaml': 'lockfileVersion: 9',
      'my-suite/playwright.config.js': 'module.exports = {}',
    });
    const res = await call('POST', '/v1/checks/playwright', {
      name: 'Zip',
      codeBundle: zip.toString('base64'),
      engine: 'bun1.3',
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toMatchObject({ engine: 'bun', engineVersion: '1.3', codeBundleFormat: 'zip' });
  });

  it.each([
    [{}, /body\/codeBundle is required/],
    [
      { codeBundle: Buffer.from('not an archive').toString('base64') },
      /body\/codeBundle: the archive is neither tar.gz nor zip/,
    ],
    [{ engine: 'node', engineVersion: '20' }, /body\/engineVersion must be one of 22, 24, 26/],
    [{ engine: 'deno' }, /body\/engine/],
    [{ testCommand: 'rm -rf /' }, /body\/testCommand must start with "npx playwright test"/],
    [{ testCommand: 'npx playwright test; curl evil' }, /body\/testCommand may hold plain words only/],
    [{ installCommand: 'curl x' }, /body\/installCommand must be empty/],
    [{ globalTimeout: 9000 }, /body\/globalTimeout must be at most 7200 seconds/],
    [{ workingDir: '../up' }, /body\/workingDir/],
    [{ browsers: ['firefox'] }, /body\/browsers/],
    [{ frequency: 0, frequencyOffset: 10 }, /body\/frequency must be at least 1/],
  ])('rejects %j with a 400 naming the field', async (patch, message) => {
    const { call } = await account();
    const base64 = (await packSuite({ files: spec })).toString('base64');
    const body =
      'codeBundle' in patch || Object.keys(patch).length === 0
        ? { name: 'x', ...patch }
        : { name: 'x', codeBundle: base64, ...patch };
    const res = await call('POST', '/v1/checks/playwright', body);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ statusCode: 400, error: 'Bad Request' });
    expect(String(res.body.message)).toMatch(message);
  });

  it('rejects an archive that is not a Playwright project, or that escapes its folder', async () => {
    const { call } = await account();
    const noConfig = (await zipBuffer({ 'package.json': '{}', 'package-lock.json': '{}' })).toString('base64');
    const r1 = await call('POST', '/v1/checks/playwright', { name: 'x', codeBundle: noConfig });
    expect(r1.status).toBe(400);
    expect(String(r1.body.message)).toMatch(/not a Playwright project: no Playwright config/);
    // yazl refuses to write a `..` name, so this one is put together by hand.
    const evil = zipProject({ '../evil.js': 'x', 'package.json': '{}' }, []).toString('base64');
    const r2 = await call('POST', '/v1/checks/playwright', { name: 'x', codeBundle: evil });
    expect(r2.status).toBe(400);
    expect(String(r2.body.message)).toMatch(/"\.\." is not allowed/);
  });
});

describe('PUT /v1/checks/playwright/{id}', () => {
  it("changes settings, replaces the archive when one is sent, and hides other accounts' suites", async () => {
    const { call } = await account();
    const created = await call('POST', '/v1/checks/playwright', {
      name: 's',
      codeBundle: (await packSuite({ files: spec })).toString('base64'),
    });
    const first = created.body.cacheHash;
    const updated = await call('PUT', `/v1/checks/playwright/${created.body.id}`, {
      globalTimeout: 120,
      engine: 'node26',
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ globalTimeout: 120, engine: 'node', engineVersion: '26', cacheHash: first });
    const replaced = await call('PUT', `/v1/checks/playwright/${created.body.id}`, {
      codeBundle: (await packSuite({ files: { ...spec, 'tests/b.spec.ts': '// b' } })).toString('base64'),
    });
    expect(replaced.body.cacheHash).not.toBe(first);
    const other = await account('Other');
    const denied = await other.call('PUT', `/v1/checks/playwright/${created.body.id}`, { name: 'mine' });
    expect(denied.status).toBe(404);
    const trigger = await other.call('POST', `/v1/checks/playwright/${created.body.id}/trigger`, {});
    expect(trigger.status).toBe(404);
  });
});

describe('jobs, archive downloads and test sessions', () => {
  it('hands agents the suite job and its archive; a trigger starts a test session run', async () => {
    const acme = await account();
    const archive = await packSuite({ files: spec });
    const created = await acme.call('POST', '/v1/checks/playwright', {
      name: 's',
      privateLocations: ['office'],
      codeBundle: archive.toString('base64'),
      engine: 'bun',
      installCommand: 'bun install --frozen-lockfile --verbose',
      testCommand: 'npx playwright test --workers=2',
      globalTimeout: 300,
      degradedResponseTime: 60000,
    });
    expect(created.status).toBe(201);
    const a = await agent(acme.locationKey);
    // Created and activated: the scheduler runs it once right away, as a scheduled run (CI unset).
    const [scheduled] = await a.lease();
    expect(scheduled?.timeoutMs).toBe(300_000 + 60_000);
    const check = scheduled?.check as PlaywrightCheckDefinition;
    expect(check).toMatchObject({
      checkType: 'PLAYWRIGHT',
      engine: 'bun1.3',
      testArgs: ['--workers=2'],
      installArgs: ['install', '--frozen-lockfile', '--verbose'],
      globalTimeoutMs: 300_000,
      degradedResponseTime: 60000,
      testSession: false,
      workingDir: null,
      codeBundle: { sha256: created.body.cacheHash, size: archive.length, format: 'tar.gz' },
    });

    const download = await a.bundle(check.codeBundle.sha256);
    expect(download.status).toBe(200);
    expect(Buffer.from(await download.arrayBuffer()).equals(archive)).toBe(true);
    expect((await a.bundle('0'.repeat(64))).status).toBe(404);
    expect((await a.bundle(check.codeBundle.sha256, 'pl_wrong')).status).toBe(401);
    // Another account's agent cannot fetch it even knowing the hash.
    const other = await account('Other');
    expect((await (await agent(other.locationKey)).bundle(check.codeBundle.sha256)).status).toBe(404);

    const trig = await acme.call('POST', `/v1/checks/playwright/${created.body.id}/trigger`, {});
    expect(trig.status).toBe(201);
    expect(trig.body).toMatchObject({
      checkId: created.body.id,
      testSession: true,
      runs: [{ locationId: acme.locationId, state: 'queued' }],
    });
    const [session] = await a.lease();
    expect(session?.runId).toBe((trig.body.runs as Array<{ runId: string }>)[0]?.runId);
    expect((session?.check as PlaywrightCheckDefinition | undefined)?.testSession).toBe(true);
    // The mark never reaches the stored check.
    const stored = await acme.call('GET', `/v1/checks/${created.body.id}`);
    expect(JSON.stringify(stored.body)).not.toContain('TestSession');
  });
});

describe('archive bombs', () => {
  const project = SMALLEST_PROJECT;
  const cap = DEFAULT_CAPS.unpackedMaxBytes;

  async function upload(archive: Buffer) {
    const { call } = await account();
    const codeBundle = archive.toString('base64');
    const { result, ms, rss } = await measured(() =>
      call('POST', '/v1/checks/playwright', { name: 'bomb', codeBundle }),
    );
    return { ...result, ms, rss };
  }

  it.each(BOMBS)(
    'answers %s with a 400 naming the limit it breaks, at once and in little memory',
    async (_what, bomb) => {
      const res = await upload(bomb.archive());
      expect(res.status).toBe(400);
      expect(String(res.body.message)).toMatch(refusalAfter('body/codeBundle: ', bomb.refusal));
      expect(res.ms).toBeLessThan(REFUSAL_MS);
      expect(res.rss).toBeLessThan(RSS_BUDGET);
    },
  );

  it('answers a zip whose entries declare more than the cap with a 400 naming the cap', async () => {
    const res = await upload(
      zipProject(project, [{ name: 'zeros.bin', declaredBytes: cap + 1, body: deflatedZeros(201 * MiB) }]),
    );
    expect(res.status).toBe(400);
    expect(String(res.body.message)).toMatch(
      /^body\/codeBundle: the archive unpacks to more than 209715200 bytes \(SUITE_UNPACKED_MAX_BYTES\)/,
    );
  });

  it('accepts a maximal legal tar.gz (files adding up to exactly the cap) in little memory', async () => {
    const res = await upload(maximalTarGz(project, cap));
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.rss).toBeLessThan(RSS_BUDGET);
    // One byte more is refused.
    const over = await upload(maximalTarGz(project, cap + 1));
    expect(over.status).toBe(400);
    expect(String(over.body.message)).toMatch(/unpacks to more than 209715200 bytes/);
  });

  it('accepts a maximal legal zip in little memory', async () => {
    const res = await upload(maximalZip(project, cap));
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.rss).toBeLessThan(RSS_BUDGET);
  });
});
