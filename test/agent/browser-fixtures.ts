/**
 * Shared by the browser-check tests: a loopback page server, a sandbox pool on the real runtimes,
 * an artifact sink that keeps copies of what a run adds, and counters of what a browser run could
 * leave behind (processes, folders).
 */
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { buffer } from 'node:stream/consumers';
import pino from 'pino';
import yauzl from 'yauzl';
import type { ArtifactSpec } from '../../src/agent/artifacts/uploader.ts';
import type { RunArtifactSink } from '../../src/agent/browser/engine.ts';
import type { ArtifactNote, ArtifactRef } from '../../src/shared/artifacts.ts';
import type { BrowserCheckDefinition, MultiStepCheckDefinition } from '../../src/shared/checks/types.ts';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const quietLog = pino({ level: 'silent' });

export interface PageServer {
  url: string;
  /** Requests seen, in order (path and headers). */
  seen: Array<{ path: string; headers: http.IncomingHttpHeaders }>;
  /** Resolves when a request for `path` arrives. */
  waitFor(path: string): Promise<void>;
  close(): Promise<void>;
}

/** Pages for browser checks and a JSON API for multistep checks, on 127.0.0.1. `/hang` never answers. */
export async function startPageServer(pageSecret = ''): Promise<PageServer> {
  const seen: PageServer['seen'] = [];
  const waiters = new Map<string, Array<() => void>>();
  const hanging = new Set<http.ServerResponse>();
  const server = http.createServer((req, res) => {
    const p = new URL(req.url ?? '/', 'http://x').pathname;
    seen.push({ path: p, headers: req.headers });
    for (const w of waiters.get(p) ?? []) w();
    waiters.delete(p);
    if (p.startsWith('/hang')) {
      hanging.add(res);
      return;
    }
    if (p === '/api/items') {
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({
          items: [
            { id: 1, name: 'one' },
            { id: 2, name: 'two' },
          ],
        }),
      );
      return;
    }
    if (p === '/api/echo' && req.method === 'POST') {
      let body = '';
      req.on('data', (c: Buffer) => {
        body += c.toString();
      });
      req.on('end', () => {
        res.setHeader('content-type', 'application/json');
        res.statusCode = 201;
        res.end(JSON.stringify({ received: JSON.parse(body || 'null') }));
      });
      return;
    }
    if (p === '/missing.png' || p === '/api/missing') {
      res.statusCode = 404;
      res.end('not found');
      return;
    }
    res.setHeader('content-type', 'text/html');
    if (p === '/second') {
      res.end('<title>Second page</title><h1>Second</h1>');
      return;
    }
    res.end(
      `<!doctype html><title>Home page</title><h1>Hello</h1><p id="secret">${pageSecret}</p>` +
        `<a id="next" href="/second">next</a><img src="/missing.png"><script>console.error('boom from page')</script>`,
    );
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    waitFor: (p) =>
      new Promise((resolve) => {
        waiters.set(p, [...(waiters.get(p) ?? []), resolve]);
      }),
    close: async () => {
      for (const r of hanging) r.destroy();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/** Keeps a copy of every artifact a run adds (the real uploader copies too, then uploads). */
export class KeepingSink implements RunArtifactSink {
  readonly dir: string;
  readonly added: ArtifactSpec[] = [];
  readonly #refs: ArtifactRef[] = [];
  constructor(dir: string) {
    this.dir = dir;
    mkdirSync(dir, { recursive: true });
  }
  async add(spec: ArtifactSpec) {
    copyFileSync(spec.path, path.join(this.dir, spec.name));
    this.added.push(spec);
    const ref: ArtifactRef = {
      name: spec.name,
      kind: spec.kind,
      contentType: spec.contentType ?? '',
      size: 0,
      sha256: '',
    };
    this.#refs.push(ref);
    return { ok: true as const, ref };
  }
  readonly notes: ArtifactNote[] = [];
  note(note: ArtifactNote) {
    this.notes.push(note);
  }
  details() {
    return { artifacts: [...this.#refs], ...(this.notes.length > 0 ? { artifactNotes: [...this.notes] } : {}) };
  }
  file(name: string): string {
    return path.join(this.dir, name);
  }
}

/** What a browser and a multistep check share: a script on runtime 2026.04, without dependencies. */
function scriptCheck<K extends 'BROWSER' | 'MULTI_STEP'>(checkType: K, id: string, name: string, script: string) {
  return {
    id,
    accountId: 'acct-1',
    name,
    checkType,
    shouldFail: false,
    runtimeId: '2026.04',
    script,
    dependencies: [],
  };
}

export function browserCheck(script: string, extra: Partial<BrowserCheckDefinition> = {}): BrowserCheckDefinition {
  return { ...scriptCheck('BROWSER', 'check-1', 'browser', script), ...extra };
}

export function multiStepCheck(
  script: string,
  extra: Partial<MultiStepCheckDefinition> = {},
): MultiStepCheckDefinition {
  return { ...scriptCheck('MULTI_STEP', 'check-2', 'multistep', script), ...extra };
}

/** Every text entry of a zip, concatenated (what a trace viewer would show as text). */
export async function zipText(file: string): Promise<{ names: string[]; text: string }> {
  const zip = await yauzl.openPromise(file, { lazyEntries: true });
  const names: string[] = [];
  let text = '';
  for await (const entry of zip.eachEntry()) {
    names.push(entry.fileName);
    text += `${(await buffer(await zip.openReadStreamPromise(entry))).toString('latin1')}\n`;
  }
  zip.close();
  return { names, text };
}

/**
 * Processes that belong to browser runs under `jobsRoot`: working inside it, or carrying a variable
 * that points into it (every process a run starts inherits PLAYWRIGHT_BROWSERS_PATH=<job folder>/…);
 * with browserOnly, only the latter.
 */
export function processesUnder(
  jobsRoot: string,
  opts: { browserOnly?: boolean } = {},
): Array<{ pid: number; comm: string }> {
  const out: Array<{ pid: number; comm: string }> = [];
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
      if (state === 'Z' || state === 'X') continue;
      let ours = false;
      // browserOnly: what browser runs started (idle warm sandboxes work in the same root too).
      if (!opts.browserOnly) {
        try {
          const cwd = readlinkSync(`/proc/${pid}/cwd`);
          ours = cwd === jobsRoot || cwd.startsWith(`${jobsRoot}/`);
        } catch {}
      }
      if (!ours) {
        const environ = readFileSync(`/proc/${pid}/environ`, 'latin1');
        // Sandboxes get HOME and TMPDIR in the root; only browser runs set PLAYWRIGHT_BROWSERS_PATH.
        ours = environ.includes(opts.browserOnly ? `PLAYWRIGHT_BROWSERS_PATH=${jobsRoot}/` : `=${jobsRoot}/`);
      }
      if (ours) out.push({ pid, comm: readFileSync(`/proc/${pid}/comm`, 'utf8').trim() });
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** Live Chromium processes on the machine (system-wide, by command name; zombies not counted). */
export function chromiumProcessCount(): number {
  let n = 0;
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const comm = readFileSync(`/proc/${name}/comm`, 'utf8').trim();
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
      if (/^(chromium|chrome)/.test(comm) && state !== 'Z') n += 1;
    } catch {}
  }
  return n;
}

/** Temporary folders a browser could leave: the job folders, and Playwright's and Chromium's in /tmp. */
export function tempFolders(jobsRoot: string): string[] {
  const inRoot = existsSync(jobsRoot) ? readdirSync(jobsRoot).map((n) => path.join(jobsRoot, n)) : [];
  const inTmp = readdirSync('/tmp')
    .filter(
      (n) =>
        n.startsWith('playwright') || n.startsWith('.org.chromium') || n.startsWith('playwright_chromiumdev_profile'),
    )
    .map((n) => path.join('/tmp', n));
  return [...inRoot, ...inTmp];
}
