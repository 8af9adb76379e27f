import { rmSync } from 'node:fs';
import SwaggerParser from '@apidevtools/swagger-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildService, type Service } from '../../src/service/app.ts';
import { loadServiceConfig } from '../../src/service/config.ts';
import { tempDataDir } from '../helpers/public-api.ts';

/** Every operation ../shared/spec/service-api.md lists (numbered 1-11 and the three creations). */
const SPEC_OPERATIONS: ReadonlyArray<readonly [string, string]> = [
  ['get', '/v1/status-pages'],
  ['get', '/v1/status-pages/incidents'],
  ['post', '/v1/status-pages/incidents'],
  ['get', '/v1/status-pages/incidents/{incidentId}'],
  ['put', '/v1/status-pages/incidents/{incidentId}'],
  ['get', '/v1/status-pages/incidents/{incidentId}/incident-updates'],
  ['post', '/v1/status-pages/incidents/{incidentId}/incident-updates'],
  ['get', '/v1/status-pages/incidents/{incidentId}/incident-updates/{incidentUpdateId}'],
  ['put', '/v1/status-pages/incidents/{incidentId}/incident-updates/{incidentUpdateId}'],
  ['get', '/v1/checks/heartbeats/{checkId}/events'],
  ['get', '/v1/checks/heartbeats/{checkId}/availability'],
  ['post', '/v2/check-groups'],
  ['post', '/v1/incidents'],
  ['post', '/v1/dashboards'],
];

/**
 * Routes of other areas that do not declare their responses yet (reported; remove an entry when its
 * route declares a success schema and its 401).
 */
const KNOWN_UNDECLARED = new Set([
  'GET /v1/check-runs/{runId}',
  'POST /v1/check-runs/{runId}/cancel',
  'GET /v1/private-locations/{id}/error-reports',
  'GET /v1/check-results/{checkId}/{checkResultId}/assets/{name}',
]);

/** Spec operations whose routes are being built alongside (check groups): the hook list. */
const PENDING = new Set(['post /v2/check-groups']);

interface OpenApiDoc {
  openapi: string;
  paths: Record<
    string,
    Record<string, { responses?: Record<string, unknown>; parameters?: unknown[]; requestBody?: unknown }>
  >;
}

describe('/openapi.json', () => {
  let service: Service;
  let dataDir: string;
  let doc: OpenApiDoc;
  beforeAll(async () => {
    dataDir = tempDataDir();
    service = await buildService(
      loadServiceConfig({ DATA_DIR: dataDir, PORT: '0', PUBLIC_URL: 'https://outpost.example.com' }),
      { logger: false },
    );
    const res = await service.app.inject({ method: 'GET', url: '/openapi.json' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    doc = res.json() as OpenApiDoc;
  });
  afterAll(async () => {
    await service.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('is a valid OpenAPI 3 document, served without an API key', async () => {
    expect(doc.openapi).toMatch(/^3\./);
    // validate() dereferences in place: give it a copy.
    await expect(SwaggerParser.validate(structuredClone(doc) as never)).resolves.toBeTruthy();
  });

  it('has every operation of the spec, with its methods', () => {
    const missing = SPEC_OPERATIONS.filter(
      ([method, path]) => !PENDING.has(`${method} ${path}`) && !doc.paths[path]?.[method],
    ).map(([m, p]) => `${m.toUpperCase()} ${p}`);
    expect(missing).toEqual([]);
  });

  it('has the spec operations still being built (skipped until their routes are registered)', (ctx) => {
    const pending = SPEC_OPERATIONS.filter(([method, path]) => PENDING.has(`${method} ${path}`));
    if (
      !pending.every(([method, path]) =>
        service.app.hasRoute({ method: method.toUpperCase() as 'POST', url: path.replace(/\{(\w+)\}/g, ':$1') }),
      )
    ) {
      ctx.skip();
    }
    expect(pending.filter(([method, path]) => !doc.paths[path]?.[method])).toEqual([]);
  });

  it('documents request and response schemas from the same TypeBox objects that validate', () => {
    const post = doc.paths['/v1/dashboards']?.post;
    const body = JSON.stringify(post?.requestBody);
    expect(body).toContain('"refreshRate"');
    expect(body).toContain('[60,300,600]');
    expect(Object.keys(post?.responses ?? {}).sort()).toEqual(['201', '400', '401', '404', '409', '429']);
    const events = doc.paths['/v1/checks/heartbeats/{checkId}/events']?.get;
    expect(JSON.stringify(events?.parameters)).toContain('"maximum":10');
  });

  it('declares a response schema for every operation (2xx and errors)', () => {
    const without: string[] = [];
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        const codes = Object.keys(op.responses ?? {});
        const open =
          Array.isArray((op as { security?: unknown[] }).security) &&
          (op as { security: unknown[] }).security.length === 0;
        if (KNOWN_UNDECLARED.has(`${method.toUpperCase()} ${path}`)) continue;
        if (!codes.some((c) => c.startsWith('2')) || (!open && !codes.includes('401')))
          without.push(`${method.toUpperCase()} ${path} (${codes.join(',') || 'none'})`);
      }
    }
    expect(without).toEqual([]);
  });

  it('bounds every number a request carries (path, query and body) on both sides', () => {
    const unbounded: string[] = [];
    const walk = (schema: unknown, at: string) => {
      if (schema === null || typeof schema !== 'object') return;
      const s = schema as Record<string, unknown>;
      const types = Array.isArray(s.type) ? s.type : [s.type];
      const numeric = types.includes('integer') || types.includes('number');
      const bounded =
        Array.isArray(s.enum) ||
        (s.maximum !== undefined && (s.minimum !== undefined || s.exclusiveMinimum !== undefined));
      if (numeric && !bounded) unbounded.push(at);
      for (const [key, value] of Object.entries(s)) walk(value, `${at}/${key}`);
    };
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        const where = `${method.toUpperCase()} ${path}`;
        for (const p of (op.parameters ?? []) as Array<{ in: string; name: string; schema?: unknown }>)
          walk(p.schema, `${where} ${p.in}:${p.name}`);
        walk(op.requestBody, `${where} body`);
      }
    }
    expect(unbounded).toEqual([]);
  });

  it('leaves the agent protocol out and keeps pings open (no security requirement)', () => {
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/agent/'))).toEqual([]);
    const ping = doc.paths['/ping/{pingToken}'] as Record<string, { security?: unknown[] }> | undefined;
    expect(Object.keys(ping ?? {}).sort()).toEqual(['get', 'head', 'post']);
    expect(ping?.get?.security).toEqual([]);
  });

  it('keeps the check and group trigger URLs open alike (the token in the path is the credential)', () => {
    for (const path of ['/checks/{checkId}/trigger/{token}', '/check-groups/{groupId}/trigger/{token}']) {
      const ops = doc.paths[path] as Record<string, { security?: unknown[] }> | undefined;
      expect(Object.keys(ops ?? {}).sort(), path).toEqual(['get', 'post']);
      expect(ops?.get?.security, path).toEqual([]);
      expect(ops?.post?.security, path).toEqual([]);
    }
  });
});
