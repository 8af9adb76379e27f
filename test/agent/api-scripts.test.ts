/**
 * API checks with setup and teardown scripts, end to end on the agent: real runtimes, real sandbox
 * processes, a real loopback HTTP server, and (last) a real daemon leasing a scripted job next to a
 * hostile one.
 */
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiCheckRunner } from '../../src/agent/checks/api.ts';
import { defaultRuntimesDir, discoverRuntimes } from '../../src/agent/runtimes.ts';
import { SandboxPool } from '../../src/agent/sandbox/pool.ts';
import type { ApiCheckDefinition } from '../../src/shared/checks/types.ts';
import { AGENT_PATHS } from '../../src/shared/protocol.ts';
import { apiCheck, context } from './api-fixtures.ts';
import { type JsonServer, startServer, tempDir } from './helpers.ts';
import { makeJob } from './protocol-stub.ts';
import { type Cleanups, startStubDaemon } from './stub-daemon.ts';

let pool: SandboxPool;
let server: JsonServer;

beforeAll(async () => {
  const found = await discoverRuntimes(defaultRuntimesDir());
  expect(
    found.runtimes.map((r) => r.id),
    'run npm run runtimes:install',
  ).toEqual(['2026.04', '2025.04']);
  pool = new SandboxPool({ runtimes: found.runtimes, size: 2 });
  await pool.fill();
  server = await startServer((req, body, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'x-served-by': 'loopback' });
    res.end(JSON.stringify({ seen: req.headers['x-signed'] ?? null, query: req.url, body, status: 'up' }));
  });
});

afterAll(async () => {
  await pool?.close();
  await server?.close();
});

function scripted(
  extra: Partial<ApiCheckDefinition>,
  request: Partial<ApiCheckDefinition['request']> = {},
): ApiCheckDefinition {
  return apiCheck({ url: `${server.url}/items`, ...request }, { runtimeId: '2026.04', ...extra });
}

const setupLog = (outcome: {
  apiCheckResult: { jobLog: Record<string, unknown> | null } | null;
}): Array<{ msg: string }> => (outcome.apiCheckResult?.jobLog?.setup ?? []) as Array<{ msg: string }>;

const run = (check: ApiCheckDefinition, over: Parameters<typeof context>[0] = {}) =>
  apiCheckRunner.run(check, context({ sandboxes: pool, ...over }));

describe('API checks with setup and teardown scripts', () => {
  it('setup changes the request (header, query, method, body) and the change reaches the server', async () => {
    const before = server.requests.length;
    const outcome = await run(
      scripted({
        environmentVariables: [{ key: 'SIGNING_KEY', value: 'k-123', secret: false }],
        localSetupScript: `const crypto = require('crypto-js');
request.headers['X-Signed'] = process.env.SIGNING_KEY + ':' + crypto.SHA256(request.url).toString().slice(0, 8);
request.queryParameters.page = '2';
request.method = 'POST';
request.body = JSON.stringify({ hello: 'world' });
console.log('signed', request.url);`,
      }),
    );
    expect(outcome.error).toBeNull();
    expect(outcome.hasFailures).toBe(false);
    const got = server.requests[before]!;
    expect(got.method).toBe('POST');
    expect(got.path).toBe('/items?page=2');
    expect(got.headers['x-signed']).toMatch(/^k-123:[0-9a-f]{8}$/);
    expect(got.body).toBe('{"hello":"world"}');
    expect(outcome.apiCheckResult?.request.headers['X-Signed']).toMatch(/^k-123:/);
    const jobLog = outcome.apiCheckResult?.jobLog as {
      setup: Array<{ stream: string; msg: string; time: string }>;
      teardown: unknown[];
    };
    expect(jobLog.setup).toEqual([{ stream: 'stdout', msg: `signed ${server.url}/items`, time: expect.any(String) }]);
    expect(Number.isNaN(Date.parse(jobLog.setup[0]!.time))).toBe(false);
    expect(jobLog.teardown).toEqual([]);
  });

  it('teardown sees the response and the variables, logs to the job log, and its changes are what assertions see', async () => {
    const outcome = await run(
      scripted(
        {
          environmentVariables: [{ key: 'EXPECTED', value: 'up', secret: false }],
          localTearDownScript: `const body = JSON.parse(response.body);
console.log('status', response.status, response.statusCode, response.headers['x-served-by'], typeof response.timingPhases.total);
console.error('checked', body.status === process.env.EXPECTED);
response.body = JSON.stringify({ normalized: body.status });`,
        },
        { assertions: [{ source: 'JSON_BODY', comparison: 'EQUALS', property: '$.normalized', target: 'up' }] },
      ),
    );
    expect(outcome.error).toBeNull();
    expect(outcome.hasFailures).toBe(false);
    expect(outcome.apiCheckResult?.response?.body).toBe('{"normalized":"up"}');
    const jobLog = outcome.apiCheckResult?.jobLog as {
      setup: unknown[];
      teardown: Array<{ stream: string; msg: string }>;
    };
    expect(jobLog.setup).toEqual([]);
    expect(jobLog.teardown.map((l) => [l.stream, l.msg])).toEqual([
      ['stdout', 'status 200 200 loopback number'],
      ['stderr', 'checked true'],
    ]);
  });

  it('a setup error fails the check with the message and line, and the request is not sent', async () => {
    const before = server.requests.length;
    const outcome = await run(
      scripted({ localSetupScript: `console.log('starting');\nconst token = undefined;\ntoken.split('.');` }),
    );
    expect(outcome.hasFailures).toBe(true);
    expect(outcome.hasErrors).toBe(false);
    expect(outcome.error).toBe(
      "Setup script failed: TypeError: Cannot read properties of undefined (reading 'split') (setup.js line 3, column 7)",
    );
    expect(server.requests.length).toBe(before);
    expect(setupLog(outcome).map((l) => l.msg)).toEqual(['starting']);
  });

  it('a failing assertion in the teardown (expect) fails the check with its message', async () => {
    const outcome = await run(
      scripted({ localTearDownScript: `const { expect } = require('expect');\nexpect(response.status).toBe(404);` }),
    );
    expect(outcome.hasFailures).toBe(true);
    expect(outcome.error).toMatch(
      /^Teardown script failed: .*expect\(received\)\.toBe\(expected\)[\s\S]*\(teardown\.js line 2/,
    );
  });

  it('process.exit in a setup script is a clear failed result', async () => {
    const outcome = await run(scripted({ localSetupScript: 'process.exit(0)' }));
    expect(outcome.hasFailures).toBe(true);
    expect(outcome.hasErrors).toBe(false);
    expect(outcome.error).toBe('Setup script ended the sandbox process early (exit code 0) before it finished');
  });

  it('an endless setup script times out as a failed check', async () => {
    const outcome = await apiCheckRunner.run(
      scripted({ localSetupScript: 'while (true) {}' }),
      context({ sandboxes: pool, timeoutMs: 1_500 }),
    );
    expect(outcome.hasFailures).toBe(true);
    expect(outcome.error).toMatch(/^Setup script timed out: it ran longer than its limit of \d+ ms and was stopped$/);
  });

  it('runs on the runtime the check names: 2025.04 is Node 22, 2026.04 is Node 24', async () => {
    for (const [runtimeId, major] of [
      ['2025.04', '22'],
      ['2026.04', '24'],
    ] as const) {
      const outcome = await run(
        scripted({ runtimeId, localSetupScript: 'console.log(process.versions.node.split(".")[0])' }),
      );
      expect(outcome.hasFailures).toBe(false);
      expect(setupLog(outcome)[0]?.msg).toBe(major);
    }
  });

  it('a runtime the agent does not carry is a clear error naming the carried ones', async () => {
    const outcome = await run(scripted({ runtimeId: '2023.09', localSetupScript: 'console.log(1)' }));
    expect(outcome.hasFailures).toBe(true);
    expect(outcome.hasErrors).toBe(true);
    expect(outcome.error).toBe('runtime 2023.09 is not available on this agent; it carries 2026.04, 2025.04');
  });

  it('a runtime whose Node cannot start is an agent error, never a failed or passed check', async () => {
    const dir = tempDir('outpost-runtimes-');
    const rt = path.join(dir, '2026.04', 'node_modules', '.bin');
    mkdirSync(rt, { recursive: true });
    // Answers --version (so it is advertised) but dies on anything else: broken after discovery.
    writeFileSync(
      path.join(rt, 'node'),
      '#!/bin/sh\n[ "$1" = "--version" ] && echo v24.0.0 && exit 0\necho "broken runtime" >&2\nexit 1\n',
    );
    chmodSync(path.join(rt, 'node'), 0o755);
    const found = await discoverRuntimes(dir);
    expect(found.runtimes.map((r) => r.id)).toEqual(['2026.04']);
    const broken = new SandboxPool({ runtimes: found.runtimes, size: 1 });
    await broken.fill();
    try {
      const outcome = await apiCheckRunner.run(
        scripted({ localSetupScript: 'console.log(1)' }),
        context({ sandboxes: broken }),
      );
      expect(outcome.hasErrors).toBe(true);
      expect(outcome.hasFailures).toBe(false);
      expect(outcome.error).toMatch(
        /^agent error: the sandbox for runtime 2026\.04 .* could not start: it exited before it was ready \(exit code 1\): broken runtime$/,
      );
    } finally {
      await broken.close();
    }
  });

  it('reports values a script put into process.env.OUTPOST_SECRET_* for scrubbing', async () => {
    const seen: string[] = [];
    const outcome = await run(scripted({ localSetupScript: `process.env.OUTPOST_SECRET_TOKEN = 'tok-' + 'abcdef';` }), {
      onSecret: (v) => seen.push(v),
    });
    expect(outcome.hasFailures).toBe(false);
    expect(seen).toEqual(['tok-abcdef']);
  });
});

describe('the agent with scripted checks', () => {
  it('advertises its runtimes and keeps running jobs while a hostile script is contained', async () => {
    const cleanups: Cleanups = [];
    try {
      const { stub, daemon } = await startStubDaemon(cleanups, {
        apiKey: 'pl_api_scripts_test',
        runners: new Map([['API', apiCheckRunner]]),
        shutdownGraceSeconds: 5,
        sandboxes: pool,
      });
      const hostile = makeJob({ timeoutMs: 20_000 });
      hostile.check = scripted({
        id: 'hostile',
        localSetupScript: 'const k = []; for (let i = 0; i < 640; i++) k.push(Buffer.alloc(16 << 20, 1));',
      });
      const loop = makeJob({ timeoutMs: 3_000 });
      loop.check = scripted({ id: 'loop', localSetupScript: 'while (true) {}' });
      const normal = makeJob();
      normal.check = scripted({
        id: 'normal',
        localSetupScript: `request.headers['x-signed'] = 'ok'; console.log('normal ran');`,
      });
      for (const job of [hostile, loop, normal]) stub.addJob(job);
      await daemon.start();
      await stub.until(() => stub.stored.length === 3);
      const register = stub.server.requests.find((r) => r.path === AGENT_PATHS.register);
      expect(JSON.parse(register!.body).capabilities.runtimes).toEqual(['2026.04', '2025.04']);
      const byCheck = new Map(stub.stored.map((r) => [r.checkId, r]));
      expect(byCheck.get('normal')).toMatchObject({ hasFailures: false, hasErrors: false, error: null });
      expect(byCheck.get('hostile')).toMatchObject({ hasFailures: true, hasErrors: false });
      expect(byCheck.get('hostile')?.error).toMatch(
        /^Setup script used too much memory and was stopped: resident memory reached/,
      );
      expect(byCheck.get('loop')?.hasFailures).toBe(true);
      expect(byCheck.get('loop')?.error).toMatch(/^Setup script (timed out|was stopped)/);
      expect(daemon.isReady()).toBe(true);
    } finally {
      while (cleanups.length) await cleanups.pop()?.();
    }
  });
});
