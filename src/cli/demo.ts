/**
 * `outpost demo`: the whole path on one machine, as an operator would set it up by hand.
 * It starts the service on the embedded SQLite store, a local target to check, creates an account,
 * a private location and sample checks through the public API, starts a real agent process with the
 * location's key, and prints results as they arrive together with the commands to read them.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { EXIT } from '../shared/errors.ts';
import type { Env } from '../shared/env.ts';
import { createAccount } from '../service/accounts.ts';
import { buildService } from '../service/app.ts';
import { loadServiceConfig } from '../service/config.ts';

interface DemoOptions {
  /** Stop by itself after this many seconds; without it the demo runs until Ctrl-C. */
  durationSeconds?: number;
}

/** A tiny target with a healthy, a slow and a failing endpoint, so results show all three verdicts. */
async function startTarget(): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    if (req.url === '/slow') {
      setTimeout(
        () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok","slow":true}'),
        300,
      );
      return;
    }
    if (req.url === '/broken') {
      res.writeHead(500, { 'content-type': 'application/json' }).end('{"status":"error"}');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
  });
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

function sampleChecks(target: string, location: string) {
  const common = { frequency: 0, frequencyOffset: 10, privateLocations: [location], activated: true };
  return [
    {
      ...common,
      name: 'Demo: target is up',
      request: {
        method: 'GET',
        url: `${target}/`,
        assertions: [
          { source: 'STATUS_CODE', comparison: 'EQUALS', property: '', target: '200' },
          { source: 'JSON_BODY', comparison: 'EQUALS', property: '$.status', target: 'ok' },
        ],
      },
    },
    {
      ...common,
      name: 'Demo: slow endpoint (degraded)',
      degradedResponseTime: 100,
      maxResponseTime: 5000,
      request: {
        method: 'GET',
        url: `${target}/slow`,
        assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', property: '', target: '200' }],
      },
    },
    {
      ...common,
      name: 'Demo: broken endpoint (fails)',
      request: {
        method: 'GET',
        url: `${target}/broken`,
        assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', property: '', target: '200' }],
      },
    },
  ];
}

export async function runDemo(env: Env, options: DemoOptions): Promise<number> {
  const config = loadServiceConfig({ ...env, HOST: env.HOST ?? '127.0.0.1', LOG_LEVEL: env.LOG_LEVEL ?? 'WARN' });
  await mkdir(config.dataDir, { recursive: true });
  const target = await startTarget();
  const service = await buildService(config);
  const address = await service.start();
  const base = address.replace('0.0.0.0', '127.0.0.1').replace('[::]', '127.0.0.1');
  const out = (line: string) => process.stdout.write(`${line}\n`);

  const { accountId, apiKey } = await createAccount(service.store, `demo ${new Date().toISOString()}`);
  const headers = {
    authorization: `Bearer ${apiKey}`,
    'x-service-account': accountId,
    'content-type': 'application/json',
  };
  const api = async <T>(method: 'GET' | 'POST', pathname: string, body?: unknown): Promise<T> => {
    const res = await request(`${base}${pathname}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = (await res.body.json()) as T;
    if (res.statusCode >= 300)
      throw new Error(`${method} ${pathname} answered ${res.statusCode}: ${JSON.stringify(json)}`);
    return json;
  };

  const slug = `demo-${Date.now().toString(36)}`;
  const location = await api<{ id: string; keys: Array<{ rawKey: string }> }>('POST', '/v1/private-locations', {
    name: 'Demo location',
    slugName: slug,
  });
  const locationKey = location.keys[0]?.rawKey;
  if (!locationKey) throw new Error('the service created a private location without a key');
  const checks: Array<{ id: string; name: string }> = [];
  for (const body of sampleChecks(target.url, slug)) checks.push(await api('POST', '/v1/checks/api', body));

  const agentLog = path.join(config.dataDir, 'demo-agent.log');
  const agent = startAgentProcess(env, { API_KEY: locationKey, API_URL: base }, agentLog);

  out(`Outpost demo: service at ${base}, data in ${config.dataDir}, agent log in ${agentLog}`);
  out(
    `Account ${accountId}; private location "${slug}"; ${checks.length} sample checks every 10 s against ${target.url}`,
  );
  out('Read the results yourself with:');
  for (const check of checks) {
    out(
      `  curl -s -H 'Authorization: Bearer ${apiKey}' -H 'x-service-account: ${accountId}' ${base}/v2/check-results/${check.id}`,
    );
  }
  out(options.durationSeconds ? `Running for ${options.durationSeconds} s...` : 'Running until Ctrl-C...');

  const seen = new Set<string>();
  const withResults = new Set<string>();
  const printNewResults = async () => {
    for (const check of checks) {
      const page = await api<{ entries: Array<Record<string, unknown>> }>(
        'GET',
        `/v2/check-results/${check.id}?limit=10`,
      );
      for (const r of page.entries.reverse()) {
        if (seen.has(String(r.id))) continue;
        seen.add(String(r.id));
        withResults.add(check.id);
        const status = (r.apiCheckResult as { response?: { status?: number } } | null)?.response?.status ?? '-';
        const verdict = r.hasFailures ? 'FAIL    ' : r.isDegraded ? 'DEGRADED' : 'PASS    ';
        out(
          `${verdict} ${check.name.padEnd(32)} status ${status}  ${Math.round(Number(r.responseTime))} ms  at ${r.runLocation}  ${r.startedAt}`,
        );
      }
    }
  };

  const stopped = new Promise<string>((resolve) => {
    process.once('SIGINT', () => resolve('SIGINT'));
    process.once('SIGTERM', () => resolve('SIGTERM'));
    if (options.durationSeconds) setTimeout(() => resolve('duration'), options.durationSeconds * 1000).unref();
    agent.once('exit', (code) => resolve(`agent exited with code ${code}`));
  });
  let reason: string | undefined;
  void stopped.then((r) => {
    reason = r;
  });
  while (reason === undefined) {
    await printNewResults();
    await Promise.race([stopped, new Promise((resolve) => setTimeout(resolve, 1000))]);
  }
  await printNewResults();

  if (agent.exitCode === null) {
    agent.kill('SIGTERM');
    await new Promise((resolve) => agent.once('exit', resolve));
  }
  await service.stop();
  await target.close();
  const complete = withResults.size === checks.length;
  out(
    `Stopped (${reason}). ${seen.size} results stored; ${withResults.size} of ${checks.length} sample checks have results.`,
  );
  return complete ? EXIT.ok : EXIT.failure;
}

function startAgentProcess(env: Env, extra: Record<string, string>, logFile: string): ChildProcess {
  const cli = fileURLToPath(new URL(import.meta.url.endsWith('.ts') ? './main.ts' : './main.js', import.meta.url));
  const log = createWriteStream(logFile, { flags: 'a' });
  const child = spawn(process.execPath, [cli, 'agent'], {
    env: {
      ...env,
      AGENT_HEALTH_PORT: env.AGENT_HEALTH_PORT ?? '0',
      EXTERNAL_OBSERVABILITY: env.EXTERNAL_OBSERVABILITY ?? 'on',
      ...extra,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
  return child;
}
