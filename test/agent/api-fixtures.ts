/**
 * Test targets for the API check runner: real node:http / node:https servers on loopback, with a
 * self-signed certificate made by openssl for each test file, and builders for checks and contexts.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { pino } from 'pino';
import type { CheckContext } from '../../src/agent/checks/runner.ts';
import type { ApiCheckDefinition, ApiRequest } from '../../src/shared/checks/types.ts';
import { apiRequest } from '../support/accounts-check-bodies.ts';
import { uptimeCheckBase } from '../support/check-definition.ts';

export interface SelfSigned {
  key: string;
  cert: string;
}

/** A fresh self-signed certificate for localhost / 127.0.0.1 / ::1 (P-256: fast to make). */
export function makeSelfSigned(): SelfSigned {
  const dir = mkdtempSync(join(tmpdir(), 'outpost-api-cert-'));
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
        '-days',
        '30',
        '-subj',
        '/CN=localhost',
        '-addext',
        'subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1',
      ],
      { stdio: 'ignore' },
    );
    return { key: readFileSync(join(dir, 'key.pem'), 'utf8'), cert: readFileSync(join(dir, 'cert.pem'), 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export interface SeenRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export interface TestServer {
  /** e.g. http://127.0.0.1:12345 */
  origin: string;
  port: number;
  /** 'connection' events so far: one per TCP connection the server accepted. */
  connections(): number;
  /** Requests the server received, in order. */
  seen: SeenRequest[];
  /** Resolves when the next request for `path` arrives (to act at a known point, without sleeping). */
  nextRequest(path: string): Promise<void>;
  close(): Promise<void>;
}

/**
 * Routes:
 *  /echo               JSON of the request as received
 *  /status/:code       that status, body "status :code"
 *  /redirect/:n        302 to /redirect/(n-1); /redirect/0 answers 200 "done"
 *  /delay/:ms          answers after the server waited :ms (the server controls the delay)
 *  /hang               never answers
 *  /big/:bytes         that many bytes of "a"
 *  /json               a fixed JSON document
 *  /text               a fixed text with repeated and custom headers
 *  /reset              destroys the socket without answering
 *  /goto/:status?to=U  redirect with that status to U
 *  /gzip               a gzip-encoded JSON body
 *  /partial            headers and part of the body, then silence
 */
function handler(seen: SeenRequest[], waiters: Map<string, Array<() => void>>): http.RequestListener {
  return (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://x');
      seen.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      });
      for (const w of waiters.get(url.pathname) ?? []) w();
      waiters.delete(url.pathname);
      const parts = url.pathname.split('/').filter(Boolean);
      const arg = Number(parts[1] ?? 0);
      switch (parts[0]) {
        case 'echo':
          res.setHeader('content-type', 'application/json');
          res.end(
            JSON.stringify({
              method: req.method,
              url: req.url,
              headers: req.headers,
              body: Buffer.concat(chunks).toString('utf8'),
            }),
          );
          return;
        case 'status':
          res.statusCode = arg;
          res.end(`status ${arg}`);
          return;
        case 'redirect':
          if (arg <= 0) {
            res.end('done');
          } else {
            res.statusCode = 302;
            res.setHeader('location', `/redirect/${arg - 1}`);
            res.end();
          }
          return;
        case 'delay':
          setTimeout(() => res.end(`waited ${arg}`), arg);
          return;
        case 'hang':
          return;
        case 'big':
          res.setHeader('content-type', 'text/plain');
          res.end('a'.repeat(arg));
          return;
        case 'json':
          res.setHeader('content-type', 'application/json; charset=utf-8');
          res.end(
            JSON.stringify({
              data: [
                { id: 7, name: 'first', tags: ['x', 'y'] },
                { id: 8, name: 'second', tags: [] },
              ],
              count: 2,
              empty: '',
              nothing: null,
              meta: { version: '1.2.3', ok: true },
            }),
          );
          return;
        case 'text':
          res.setHeader('content-type', 'text/plain');
          res.setHeader('x-request-id', 'req-12345');
          res.setHeader('set-cookie', ['a=1', 'b=2']);
          res.end('Hello, Outpost! build 42 ok');
          return;
        case 'goto':
          // /goto/:status?to=URL — a redirect with that status to any URL
          res.statusCode = arg;
          res.setHeader('location', url.searchParams.get('to') ?? '/');
          res.end();
          return;
        case 'gzip':
          res.setHeader('content-type', 'application/json');
          res.setHeader('content-encoding', 'gzip');
          res.end(gzipSync(JSON.stringify({ zipped: true })));
          return;
        case 'partial':
          // headers and the start of the body, then nothing: the client waits in the body
          res.setHeader('content-type', 'text/plain');
          res.setHeader('content-length', '1000');
          res.write('start of the body');
          return;
        case 'reset':
          req.socket.destroy();
          return;
        default:
          res.statusCode = 404;
          res.end('not found');
      }
    });
  };
}

export async function startServer(opts: { tls?: SelfSigned; host?: string } = {}): Promise<TestServer> {
  const seen: SeenRequest[] = [];
  const waiters = new Map<string, Array<() => void>>();
  const h = handler(seen, waiters);
  const server = opts.tls ? https.createServer({ key: opts.tls.key, cert: opts.tls.cert }, h) : http.createServer(h);
  let connections = 0;
  server.on('connection', () => {
    connections++;
  });
  const host = opts.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const shownHost = host.includes(':') ? `[${host}]` : host;
  return {
    origin: `${opts.tls ? 'https' : 'http'}://${shownHost}:${port}`,
    port,
    connections: () => connections,
    seen,
    nextRequest(path) {
      return new Promise<void>((resolve) => {
        const list = waiters.get(path) ?? [];
        list.push(resolve);
        waiters.set(path, list);
      });
    },
    close() {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export function apiCheck(
  request: Partial<ApiRequest> & { url: string },
  extra: Partial<ApiCheckDefinition> = {},
): ApiCheckDefinition {
  return {
    ...uptimeCheckBase('API', { id: 'chk_test', accountId: 'acc_test', name: 'api test' }, 10_000, 20_000),
    ...extra,
    request: apiRequest(request),
  };
}

export function context(over: Partial<CheckContext> = {}): CheckContext {
  return {
    signal: new AbortController().signal,
    timeoutMs: 10_000,
    log: pino({ level: 'silent' }),
    useOsDnsResolver: false,
    ...over,
  };
}
