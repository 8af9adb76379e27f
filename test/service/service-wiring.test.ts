/**
 * The public API as buildService wires it: real server on an ephemeral port, real dispatcher and
 * scheduler. The route tests use a bare Fastify with a hook recorder; this checks the composition.
 */
import { rmSync } from 'node:fs';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { createAccount } from '../../src/service/accounts.ts';
import { buildService, type Service } from '../../src/service/app.ts';
import { loadServiceConfig } from '../../src/service/config.ts';
import { tempDataDir } from '../helpers/public-api.ts';

let service: Service;
let baseUrl: string;
let dataDir: string;

beforeEach(async () => {
  dataDir = tempDataDir();
  service = await buildService(loadServiceConfig({ DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1' }), {
    logger: false,
  });
  baseUrl = await service.start();
});
afterEach(async () => {
  await service.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

it('serves the public API behind account auth with ApiError bodies', async () => {
  const { accountId, apiKey } = await createAccount(service.store, 'Acme');
  const headers = {
    authorization: `Bearer ${apiKey}`,
    'x-service-account': accountId,
    'content-type': 'application/json',
  };

  const location = await fetch(`${baseUrl}/v1/private-locations`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ name: 'Office', slugName: 'office' }),
  });
  expect(location.status).toBe(201);

  const check = await fetch(`${baseUrl}/v1/checks/api`, {
    method: 'POST',
    headers,
    body: JSON.stringify({
      name: 'Home',
      privateLocations: ['office'],
      request: { method: 'GET', url: 'http://127.0.0.1:1/' },
    }),
  });
  expect(check.status).toBe(201);
  const { id } = (await check.json()) as { id: string };
  const results = await fetch(`${baseUrl}/v2/check-results/${id}`, { headers });
  expect(await results.json()).toEqual({ length: 0, entries: [], nextId: null });

  const anonymous = await fetch(`${baseUrl}/v1/checks`);
  expect(anonymous.status).toBe(401);
  expect(await anonymous.json()).toMatchObject({ statusCode: 401, error: 'Unauthorized' });

  const unknown = await fetch(`${baseUrl}/nowhere`);
  expect(await unknown.json()).toEqual({ statusCode: 404, error: 'Not Found', message: 'No route GET /nowhere' });
});
