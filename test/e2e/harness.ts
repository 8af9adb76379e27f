/**
 * End-to-end harness: real `bin/outpost serve` and `bin/outpost agent` processes on ephemeral ports,
 * a real HTTP target on loopback, and a small client for the public API. Tests wait on log lines and
 * API state, never on fixed sleeps.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** The sources by default; benchmarks point OUTPOST_CLI at dist/cli/main.js to measure what the image runs. */
const CLI = process.env.OUTPOST_CLI ?? path.join(ROOT, 'src/cli/main.ts');

export type LogLine = Record<string, unknown> & { msg?: string };

/** A child process whose JSON log lines can be awaited. */
export class Proc {
  readonly child: ChildProcess;
  readonly lines: LogLine[] = [];
  readonly stderr: string[] = [];
  #waiters: Array<{ match: (l: LogLine) => boolean; resolve: (l: LogLine) => void }> = [];
  readonly exited: Promise<number | null>;

  /** `nodeFlags` go before the CLI path: V8 flags such as the agent's are not allowed in NODE_OPTIONS. */
  constructor(args: string[], env: Record<string, string>, nodeFlags: string[] = []) {
    this.child = spawn(process.execPath, [...nodeFlags, CLI, ...args], {
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    readline.createInterface({ input: this.child.stdout! }).on('line', (raw) => {
      let line: LogLine;
      try {
        line = JSON.parse(raw) as LogLine;
      } catch {
        line = { msg: raw };
      }
      this.lines.push(line);
      this.#waiters = this.#waiters.filter((w) => {
        if (!w.match(line)) return true;
        w.resolve(line);
        return false;
      });
    });
    readline.createInterface({ input: this.child.stderr! }).on('line', (raw) => this.stderr.push(raw));
    this.exited = new Promise((resolve) => this.child.once('exit', (code) => resolve(code)));
  }

  /**
   * Resolves with the first log line (past or future) that matches. The default wait covers a start-up
   * on a busy CI machine (2 s quiet, over 20 s under load).
   */
  waitForLog(match: (l: LogLine) => boolean, timeoutMs = 60_000): Promise<LogLine> {
    const seen = this.lines.find(match);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(
            new Error(
              `no matching log line within ${timeoutMs} ms; stderr: ${this.stderr.join('\n')}\nlast lines: ${JSON.stringify(this.lines.slice(-5))}`,
            ),
          ),
        timeoutMs,
      );
      this.#waiters.push({
        match,
        resolve: (l) => {
          clearTimeout(timer);
          resolve(l);
        },
      });
    });
  }

  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill(signal);
    return this.exited;
  }
}

/** Polls `fn` until it returns a value other than undefined (for state behind an API, not time). */
export async function until<T>(
  fn: () => Promise<T | undefined>,
  { timeoutMs = 30_000, everyMs = 100, what = 'condition' } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** A fresh directory under `root` (the system's temp directory by default) and its removal. */
export async function tempDir(prefix: string, root = tmpdir()): Promise<{ dir: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(path.join(root, `outpost-${prefix}-`));
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

/** Used for a process that must come back on the same port after a restart (its agents keep their API_URL). */
export { freePort, freePorts } from '../support/loopback-port.ts';

/** Starts `outpost serve` on a free port (or env.PORT); resolves once it listens. */
export async function startService(
  env: Record<string, string>,
  nodeFlags: string[] = [],
): Promise<{ proc: Proc; url: string }> {
  const proc = new Proc(['serve'], { PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'INFO', ...env }, nodeFlags);
  const line = await proc.waitForLog((l) => l.msg === 'outpost service listening');
  return { proc, url: String(line.address) };
}

/** An `outpost serve` replica that a test stops and starts again on the same port and data folder. */
export interface Replica {
  name: string;
  port: number;
  dataDir: string;
  proc: Proc;
}

/** Resolves when replica `proc` logs that it leads in a line after its `from`th (an earlier term does not count). */
export function leadsAfter(proc: Proc, from = proc.lines.length, timeoutMs = 30_000): Promise<LogLine> {
  return proc.waitForLog((l) => l.msg === 'this replica leads' && proc.lines.indexOf(l) >= from, timeoutMs);
}

/** Whether replica `proc`'s latest word on the leadership is that it leads. */
export function isLeading(proc: Proc): boolean {
  return (
    proc.lines.findLast((l) => l.msg === 'this replica leads' || l.msg === 'this replica no longer leads')?.msg ===
    'this replica leads'
  );
}

export function startAgent(env: Record<string, string>, nodeFlags: string[] = []): Proc {
  return new Proc(
    ['agent'],
    {
      AGENT_HEALTH_PORT: '0',
      AGENT_HEALTH_HOST: '127.0.0.1',
      EXTERNAL_OBSERVABILITY: 'off',
      LOG_LEVEL: 'DEBUG',
      ...env,
    },
    nodeFlags,
  );
}

/**
 * Creates an account with the CLI against the service's DATA_DIR, exactly as an operator would. `env`
 * carries what else the service is configured with (DATABASE_URL, SECRETS_KEY), so the CLI opens the
 * same store.
 */
export async function createAccount(
  dataDir: string,
  env: Record<string, string> = {},
): Promise<{ accountId: string; apiKey: string }> {
  const proc = new Proc(['account', 'create', '--name', 'e2e'], { DATA_DIR: dataDir, ...env });
  const line = await proc.waitForLog((l) => typeof l.accountId === 'string');
  await proc.exited;
  return line as unknown as { accountId: string; apiKey: string };
}

export class Api {
  readonly base: string;
  readonly auth: { accountId: string; apiKey: string };
  constructor(base: string, auth: { accountId: string; apiKey: string }) {
    this.base = base;
    this.auth = auth;
  }

  async call<T = unknown>(
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    pathname: string,
    body?: unknown,
  ): Promise<{ status: number; body: T }> {
    const res = await request(`${this.base}${pathname}`, {
      method,
      headers: {
        authorization: `Bearer ${this.auth.apiKey}`,
        'x-service-account': this.auth.accountId,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.body.text();
    return { status: res.statusCode, body: (text ? JSON.parse(text) : undefined) as T };
  }

  async ok<T = unknown>(method: 'GET' | 'POST' | 'PUT' | 'DELETE', pathname: string, body?: unknown): Promise<T> {
    const res = await this.call<T>(method, pathname, body);
    if (res.status >= 300) throw new Error(`${method} ${pathname} answered ${res.status}: ${JSON.stringify(res.body)}`);
    return res.body;
  }

  /** A private location and its raw key. */
  async createLocation(slugName: string): Promise<{ id: string; key: string }> {
    const loc = await this.ok<{ id: string; keys: Array<{ rawKey: string }> }>('POST', '/v1/private-locations', {
      name: slugName,
      slugName,
    });
    return { id: loc.id, key: loc.keys[0]!.rawKey };
  }

  async createApiCheck(body: Record<string, unknown>): Promise<{ id: string }> {
    return this.ok('POST', '/v1/checks/api', body);
  }

  /** Many checks, `batch` requests at a time (the way a fleet's worth is created in tests and benchmarks). */
  async createApiChecks(bodies: Array<Record<string, unknown>>, batch = 25): Promise<Array<{ id: string }>> {
    const created: Array<{ id: string }> = [];
    for (let i = 0; i < bodies.length; i += batch)
      created.push(...(await Promise.all(bodies.slice(i, i + batch).map((b) => this.createApiCheck(b)))));
    return created;
  }

  async results(checkId: string, limit = 100): Promise<Array<Record<string, unknown>>> {
    const page = await this.ok<{ entries: Array<Record<string, unknown>> }>(
      'GET',
      `/v2/check-results/${checkId}?limit=${limit}`,
    );
    return page.entries;
  }

  /** The check's first result, once there is one. */
  firstResult(checkId: string, timeoutMs = 30_000): Promise<Record<string, unknown>> {
    return until(async () => (await this.results(checkId))[0], { what: `a result of check ${checkId}`, timeoutMs });
  }
}

/** A real HTTP target on loopback whose handler the test controls. */
export async function startTarget(
  handler: http.RequestListener,
): Promise<{ url: string; requests: number; close(): Promise<void> }> {
  const state = { requests: 0 };
  const server = http.createServer((req, res) => {
    state.requests++;
    handler(req, res);
  });
  server.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get requests() {
      return state.requests;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
