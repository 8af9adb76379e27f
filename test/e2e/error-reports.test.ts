/**
 * External observability across the real boundary: the agent's error reporter (Sentry SDK with the
 * undici transport) posts to the real service's envelope endpoint using the DSN the service hands out
 * at registration, and the report is readable through the public API without any secret in it.
 */
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { request, Agent as UndiciAgent } from 'undici';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Observability } from '../../src/agent/observability.ts';
import { createAccount } from '../../src/service/accounts.ts';
import { buildService, type Service } from '../../src/service/app.ts';
import { loadServiceConfig } from '../../src/service/config.ts';
import { AGENT_PATHS, PROTOCOL_VERSION, type RegisterResponse } from '../../src/shared/protocol.ts';
import { tempDataDir } from '../helpers/public-api.ts';

let service: Service;
let base: string;
let dataDir: string;
let headers: Record<string, string>;
let location: { id: string; key: string };
const dispatcher = new UndiciAgent();

beforeAll(async () => {
  dataDir = tempDataDir();
  const config = loadServiceConfig({ DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1' });
  service = await buildService(config, { logger: false });
  base = await service.start();
  // The DSN is rooted at PUBLIC_URL; with an ephemeral port that is only known now.
  config.publicUrl = new URL(base);
  const { accountId, apiKey } = await createAccount(service.store, 'obs');
  headers = { authorization: `Bearer ${apiKey}`, 'x-service-account': accountId, 'content-type': 'application/json' };
  const res = await request(`${base}/v1/private-locations`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ name: 'obs', slugName: 'obs' }),
  });
  const body = (await res.body.json()) as { id: string; keys: Array<{ rawKey: string }> };
  location = { id: body.id, key: body.keys[0]!.rawKey };
});

afterAll(async () => {
  await service.stop();
  await dispatcher.close();
  rmSync(dataDir, { recursive: true, force: true });
});

async function register(): Promise<RegisterResponse> {
  const res = await request(`${base}${AGENT_PATHS.register}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${location.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      agentId: randomUUID(),
      version: '0.0.0-test',
      protocolVersion: PROTOCOL_VERSION,
      hostname: 'test',
      capabilities: { checkTypes: ['API'], runtimes: [] },
      concurrency: { uptime: 1, heavy: 1 },
    }),
  });
  expect(res.statusCode).toBe(200);
  return (await res.body.json()) as RegisterResponse;
}

async function reports(): Promise<Array<{ event: Record<string, unknown> }>> {
  const res = await request(`${base}/v1/private-locations/${location.id}/error-reports`, { headers });
  expect(res.statusCode).toBe(200);
  return ((await res.body.json()) as { entries: Array<{ event: Record<string, unknown> }> }).entries;
}

it('EXTERNAL_OBSERVABILITY=off sends nothing at all', async () => {
  const { errorReportingDsn } = await register();
  const off = new Observability({ enabled: false, dispatcher, version: '0.0.0-test' });
  off.init(errorReportingDsn);
  off.capture(new Error('must never arrive'));
  await off.flush(2000);
  expect(await reports()).toHaveLength(0);
});

it('delivers an error report with message, stack and versions, and none of the secrets around it', async () => {
  const { errorReportingDsn } = await register();
  expect(errorReportingDsn).toBeTruthy();
  expect(errorReportingDsn).not.toContain(location.key);

  const obs = new Observability({ enabled: true, dispatcher, version: '0.0.0-test' });
  obs.init(errorReportingDsn);
  const secretUrl = 'https://internal.example.test/admin?token=s3cr3t-token-value';
  obs.capture(new Error(`upload to ${secretUrl} failed with Authorization: Bearer abcdef123456 using ${location.key}`));
  expect(await obs.flush(5000)).toBe(true);

  const [report] = await reports();
  expect(report).toBeDefined();
  const text = JSON.stringify(report);
  expect(text).toContain('upload to');
  expect(text).toContain('0.0.0-test');
  expect(text).not.toContain(location.key);
  expect(text).not.toContain('pl_');
  expect(text).not.toContain('s3cr3t-token-value');
  expect(text).not.toContain('internal.example.test');
  expect(text).not.toContain('abcdef123456');
  const exception = (report!.event.exception as { values: Array<{ stacktrace?: { frames: unknown[] } }> }).values[0]!;
  expect(exception.stacktrace?.frames.length).toBeGreaterThan(0);
  await obs.close();
});
